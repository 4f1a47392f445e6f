// The executors this build registered: filled once, on first use, from the list CMake generates
// (executors.cpp.in) of the executor libraries it built and of those it left out.
#pragma once
#include "../executor/registry.h"

namespace dml {

const ExecutorRegistry& executors();

}  // namespace dml
