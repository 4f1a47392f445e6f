#include "operator_table.h"

#include <algorithm>

#include "activation.h"
#include "attention.h"
#include "convolution.h"
#include "data_movement.h"
#include "elementwise.h"
#include "elementwise_chain.h"
#include "gemm.h"
#include "generation.h"
#include "indexing.h"
#include "normalization.h"
#include "pooling.h"
#include "recurrent.h"
#include "reduce.h"
#include "resampling.h"

namespace dml {

const std::vector<OperatorEntry>& operator_table() {
    static const std::vector<OperatorEntry> table = {
#define DML_OPERATOR(Desc, family, directml, builders) {typeid(Desc), #Desc, #family, directml, builders},
#include "operators.def"
#undef DML_OPERATOR
    };
    return table;
}

const OperatorEntry* find_operator(std::type_index type) {
    const auto& table = operator_table();
    auto it = std::find_if(table.begin(), table.end(), [&](const OperatorEntry& e) { return e.type == type; });
    return it == table.end() ? nullptr : &*it;
}

}  // namespace dml
