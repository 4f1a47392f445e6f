// GEMM on cuBLASLt, but for products of one output row or column (matrix_vector.cu). cuBLASLt is column-major, so
// the row-major product Y = op(A) op(B) is computed as Y^T = op(B)^T op(A)^T, which reads every row- or column-major
// view of A and B in place (transposing costs nothing). Other strided views (broadcast rows, ...) are packed into
// the workspace first. C rides cuBLASLt's beta, or its bias epilogue when it is a broadcast row; ReLU rides its
// epilogue; other activations follow as a kernel of ours.
#include "../../core/ops/gemm.h"

#include <numeric>

#include "../cublaslt.h"
#include "../cuda_device.h"
#include "kernel.h"
#include "matrix_vector.h"
#include "matrix_view.h"
#include "workspace.h"

namespace dml::cuda {

namespace {

// The column-major matrix cuBLASLt reads as op(X)^T, if X's storage is row- or column-major.
std::optional<LtMatrix> transposed_operand(const MatrixView& m, bool trans) {
    if ((m.cols == 1 || m.col_stride == 1) && (m.rows == 1 || m.row_stride >= m.cols))
        return LtMatrix{m.cols, m.rows, m.rows == 1 ? int64_t(m.cols) : m.row_stride, 0, trans};  // X^T as stored
    if ((m.rows == 1 || m.row_stride == 1) && (m.cols == 1 || m.col_stride >= m.rows))
        return LtMatrix{m.rows, m.cols, m.cols == 1 ? int64_t(m.rows) : m.col_stride, 0, !trans};  // X as stored
    return std::nullopt;
}

class GemmKernel : public CudaKernel {
public:
    GemmKernel(const Node& node, CudaDevice& device) : device_(device), desc_(static_cast<const GemmDesc&>(*node.desc)) {
        const TensorDesc &a = node.inputs[0]->desc, &b = node.inputs[1]->desc, &y = node.outputs[0];
        type_ = y.data_type;
        es_ = element_size(type_);
        const uint32_t B0 = y.sizes[0], B1 = y.sizes[1], M = y.sizes[2], N = y.sizes[3];
        const bool ta = desc_.trans_a == MatrixTransform::Transpose, tb = desc_.trans_b == MatrixTransform::Transpose;
        const bool f64 = type_ == DataType::Float64;  // cuBLASLt's epilogues serve float32 and float16 here

        WorkspaceLayout ws;
        // An operand cuBLASLt can read in place, or a packed copy of it in the workspace.
        auto operand = [&](const TensorDesc& d, Operand& op) {
            MatrixView v(d);
            if (!transposed_operand(v, false)) {
                op.pack = StridedCopy::packing(device, d);
                op.pack_offset = ws.reserve(d.element_count() * es_);
                v = MatrixView(TensorDesc(type_, d.sizes));
            }
            op.view = v;
        };
        operand(a, a_);
        operand(b, b_);

        LtProblem p;
        p.type = type_;
        p.alpha = desc_.alpha;
        p.beta = 0;
        p.relu = desc_.fused.function == ActivationFunction::Relu && !f64;
        post_activation_ = !p.relu && desc_.fused.function != ActivationFunction::None &&
                           desc_.fused.function != ActivationFunction::Identity;
        p.a = *transposed_operand(b_.view, tb);
        p.b = *transposed_operand(a_.view, ta);
        p.d = LtMatrix{N, M, int64_t(N), 0, false};
        MatrixView yv(y);

        if (node.inputs[2] && desc_.beta != 0.0f) {
            const TensorDesc& c = node.inputs[2]->desc;
            MatrixView cv(c);
            if (!f64 && desc_.beta == 1.0f && M > 1 && cv.row_stride == 0 && (N == 1 || cv.col_stride == 1)) {
                p.bias = true;  // a row broadcast over the rows: cuBLASLt's bias vector
            } else {
                if (!((N == 1 || cv.col_stride == 1) && (M == 1 || cv.row_stride >= N))) {
                    c_.pack = StridedCopy::packing(device, c);
                    c_.pack_offset = ws.reserve(c.element_count() * es_);
                    cv = MatrixView(TensorDesc(type_, c.sizes));
                }
                p.c = LtMatrix{N, M, M == 1 ? int64_t(N) : cv.row_stride, 0, false};
                p.beta = desc_.beta;
            }
            c_.view = cv;
            has_c_ = true;
        }

        // cuBLASLt has one batch dimension: [b0, b1] merge into one where every operand steps by b1 along
        // dimension 1 and b1 * B1 along dimension 0; else the kernel loops over dimension 0.
        std::vector<MatrixView*> views = {&a_.view, &b_.view, &yv};
        if (has_c_) views.push_back(&c_.view);
        auto merged_stride = [&](const MatrixView& v) -> std::optional<int64_t> {
            if (B0 == 1) return v.batch_stride[1];
            if (B1 == 1) return v.batch_stride[0];
            if (v.batch_stride[0] == v.batch_stride[1] * int64_t(B1)) return v.batch_stride[1];
            return std::nullopt;
        };
        bool merge = true;
        for (auto* v : views) merge = merge && merged_stride(*v).has_value();
        auto batch_stride = [&](const MatrixView& v) { return merge ? *merged_stride(v) : v.batch_stride[1]; };
        p.batch = int32_t(merge ? uint64_t(B0) * B1 : B1);
        calls_ = merge ? 1 : B0;
        p.a.batch_stride = batch_stride(b_.view);
        p.b.batch_stride = batch_stride(a_.view);
        p.d.batch_stride = batch_stride(yv);
        if (p.c) p.c->batch_stride = batch_stride(c_.view);
        p.bias_batch_stride = has_c_ ? batch_stride(c_.view) : 0;
        outer_stride_ = {a_.view.batch_stride[0], b_.view.batch_stride[0], yv.batch_stride[0],
                         has_c_ ? c_.view.batch_stride[0] : 0};
        output_count_ = y.element_count();

        // Base addresses are 256-byte aligned (cudaMalloc, arena); offsets into them may be less.
        uint64_t align = 256;
        auto fold = [&](uint64_t byte_offset) { align = std::gcd(align, byte_offset); };
        for (uint64_t off : {a_.pack_offset, b_.pack_offset, c_.pack_offset}) fold(off);
        if (!merge)
            for (int64_t s : outer_stride_) fold(uint64_t(s < 0 ? -s : s) * es_);
        p.alignment = uint32_t(align ? align : 256);

        matmul_.emplace(device.cublaslt(), p);
        matmul_offset_ = ws.reserve(matmul_->workspace_size());
        workspace_ = ws.size;
    }

    uint64_t workspace_size() const override { return workspace_; }

    void enqueue(const LaunchArgs& args) const override {
        auto* ws = static_cast<std::byte*>(args.workspace);
        auto place = [&](const Operand& op, const void* data) -> const std::byte* {
            if (!op.pack) return static_cast<const std::byte*>(data);
            op.pack->enqueue(ws + op.pack_offset, data, args.stream);
            return ws + op.pack_offset;
        };
        const std::byte* a = place(a_, args.inputs[0]);
        const std::byte* b = place(b_, args.inputs[1]);
        const std::byte* c = has_c_ ? place(c_, args.inputs[2]) : nullptr;
        auto* y = static_cast<std::byte*>(args.outputs[0]);
        for (uint32_t i = 0; i < calls_; ++i) {
            auto at = [&](auto* base, int k) {
                return base ? base + int64_t(i) * outer_stride_[k] * int64_t(es_) : base;
            };
            const std::byte* ci = at(c, 3);
            matmul_->enqueue(at(b, 1), at(a, 0), ci, at(y, 2), ci, ws + matmul_offset_, args.stream);
        }
        if (post_activation_)
            enqueue_bias_activation(device_, type_, y, 1, 1, output_count_, nullptr, 0, desc_.fused, args.stream);
    }

private:
    struct Operand {
        MatrixView view;
        std::optional<StridedCopy> pack;  // set when the operand is packed into the workspace first
        uint64_t pack_offset = 0;
    };

    const CudaDevice& device_;
    const GemmDesc& desc_;
    DataType type_;
    size_t es_;
    Operand a_, b_, c_;
    bool has_c_ = false, post_activation_ = false;
    uint32_t calls_ = 1;
    std::array<int64_t, 4> outer_stride_{};  // dimension-0 strides of a, b, y, c when batches do not merge
    uint64_t output_count_ = 0;
    std::optional<LtMatmul> matmul_;
    uint64_t matmul_offset_ = 0, workspace_ = 0;
};

std::unique_ptr<CudaKernel> make_gemm_kernel(const Node& node, CudaDevice& device) {
    if (auto k = make_matrix_vector_kernel(node, device)) return k;
    return std::make_unique<GemmKernel>(node, device);
}

}  // namespace

void register_gemm_kernels(KernelTable& t) {
    add_kernel<GemmDesc>(t, make_gemm_kernel);
}

}  // namespace dml::cuda
