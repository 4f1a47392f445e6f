// Normalization on CUDA: batch normalization (inference, training, both gradients), mean variance normalization
// (instance, layer and group normalization in practice) and local response normalization, with the CPU kernels'
// semantics (cpu/kernels/normalization.cpp) in float rather than double.
//
// The normalizations over groups (MVN, batch normalization training and its gradients) hold each group in
// registers (held_groups.cuh): a group that fits is read once and written once.
#include "../../core/ops/normalization.h"

#include <algorithm>

#include "factory.h"
#include "held_groups.cuh"

namespace dml::cuda {

namespace {

// Input k's view, or null for an optional input left out (or k < 0: none).
const TensorDesc* input_desc(const Node& node, int k) {
    return k >= 0 && size_t(k) < node.inputs.size() && node.inputs[k] ? &node.inputs[k]->desc : nullptr;
}

template <class T> const T* input_ptr(const LaunchArgs& a, int k) {
    return k >= 0 && size_t(k) < a.inputs.size() ? static_cast<const T*>(a.inputs[k]) : nullptr;
}

// The element strides of `t` viewed at `sizes`: its size-1 dimensions broadcast (stride 0); all zero for an
// absent optional operand, which is never read.
std::vector<int64_t> strides_at(const TensorDesc* t, const Sizes& sizes) {
    std::vector<int64_t> s(sizes.size(), 0);
    if (!t) return s;
    const Strides st = t->effective_strides();
    for (size_t d = 0; d < sizes.size(); ++d) s[d] = t->sizes[d] == sizes[d] ? int64_t(st[d]) : 0;
    return s;
}

// Dimensions the training operators reduce: those where the per-channel tensor is 1 and the input is not.
std::vector<bool> broadcast_dims(const TensorDesc& input, const TensorDesc& stats) {
    std::vector<bool> r(input.rank());
    for (size_t d = 0; d < input.rank(); ++d) r[d] = stats.sizes[d] == 1 && input.sizes[d] != 1;
    return r;
}


// MEAN_VARIANCE_NORMALIZATION1 and BATCH_NORMALIZATION_TRAINING: y = act(scale * (x - mean) / sqrt(var + eps) +
// bias + add) over each group (MVN without normalize_variance leaves out the division); training also writes each
// group's mean and (population) variance. A chunk's statistics are its mean and sum of squared deviations, from the
// registers in two passes; chunks combine as Chan et al.
template <class T>
struct NormalizeOp {
    using Type = T;
    enum { X, Y, Scale, Bias, Add, N };
    static constexpr int kStreams = 1;
    static constexpr bool kWide = true;
    struct Coef {
        float mean, inv_std;
    };

    const T* x;
    T* y;
    const T *scale, *bias, *add;  // each optional
    T *mean, *variance;           // both or neither
    float epsilon;
    bool normalize_variance;
    bool normalize_mean;  // false: mean 0, the variance the mean square (MVN's normalize_mean)
    FusedActivation act;
    // Bit k: optional operand k (Scale, Bias, Add) loads in vectors where y stores them; the others are constant
    // along y's vectors (plan_groups keeps the vector kernels to those two layouts), or the kernel's VEC is 1.
    unsigned vector_operands;

    // (count, mean, sum of squared deviations)
    static __device__ Triple combine(Triple p, Triple q) {
        const float n = p.a + q.a;
        if (n == 0.0f) return p;
        const float d = q.b - p.b, f = q.a / n;
        return {n, p.b + d * f, p.c + q.c + d * d * p.a * f};
    }

    template <int VEC>
    __device__ void gather(const int64_t (&at)[N], Vector<T, VEC> (&v)[1], L2Policy pol) const {
        v[0] = load_vector<VEC>(x + at[X], pol);
    }

    template <class Team, int ITEMS, int VEC>
    __device__ Triple reduce(const Team& team, const Vector<T, VEC> (&v)[ITEMS][1], int held, uint64_t count,
                             const int64_t (&)[N]) const {
        auto sum = [](float p, float q) { return p + q; };
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (k < held)
#pragma unroll
                for (int j = 0; j < VEC; ++j) s += v[k][0][j];
        const float n = float(count), m = team.reduce(s, sum) / n;
        float sq = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (k < held)
#pragma unroll
                for (int j = 0; j < VEC; ++j) sq += (v[k][0][j] - m) * (v[k][0][j] - m);
        return {n, m, team.reduce(sq, sum)};
    }

    __device__ Coef finish(Triple t, const int64_t (&)[N], uint64_t group, uint64_t, bool write) const {
        // Without normalize_mean the deviations are from 0: their mean square is the variance plus the mean's square.
        const float var = t.c / t.a + (normalize_mean ? 0.0f : t.b * t.b), m = normalize_mean ? t.b : 0.0f;
        if (write && mean) {
            store(mean + group, m);
            store(variance + group, var);
        }
        return {m, normalize_variance ? 1.0f / sqrtf(var + epsilon) : 1.0f};
    }

    // The VEC elements of optional operand k a vector of y takes (`absent` where the operand is left out): one
    // 16-byte load where the operand runs along the vector (layer normalization's scale and bias), else one element,
    // constant along it (group normalization's per-channel scale and bias). (Filling the copies only where output
    // reads them, some operand in vectors, made the run kernels of four vectors a thread spill.)
    template <int VEC>
    __device__ Vector<T, VEC> operand(const T* p, int k, const int64_t (&at)[N], float absent) const {
        if (VEC > 1 && (vector_operands >> k & 1)) return load_vector<VEC>(p + at[k]);
        Vector<T, VEC> o;
        o.v[0] = p ? p[at[k]] : to_stored<T>(absent);
#pragma unroll
        for (int j = 1; j < VEC; ++j) o.v[j] = o.v[0];
        return o;
    }
    template <int VEC>
    struct Operands {
        Vector<T, VEC> scale, bias, add;
    };
    template <int VEC>
    __device__ Operands<VEC> operands(const int64_t (&at)[N]) const {
        return {operand<VEC>(scale, Scale, at, 1.0f), operand<VEC>(bias, Bias, at, 0.0f),
                operand<VEC>(add, Add, at, 0.0f)};
    }

    // y = act((x - mean) * inv_std * scale + bias + add). Where the operands are constant along the vector, one
    // multiply-add an element with the coefficients taken once a vector: a few instructions an element keep the
    // pass that writes a group cut into chunks (its second read) less bound by issue. (The same form element by
    // element made the run kernels of four vectors a thread spill.)
    template <int VEC>
    __device__ void output(Vector<T, VEC> (&v)[1], const Operands<VEC>& o, Coef c) const {
        with_activation<std::is_same_v<T, __half>>(act, [&](const auto& activation) {
            if (vector_operands == 0) {
                const float a = c.inv_std * o.scale[0], b = o.bias[0] + o.add[0];
#pragma unroll
                for (int j = 0; j < VEC; ++j) v[0].v[j] = to_stored<T>(activation(fmaf(v[0][j] - c.mean, a, b)));
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    float r = (v[0][j] - c.mean) * c.inv_std;
                    if (scale) r *= o.scale[j];
                    if (bias) r += o.bias[j];
                    if (add) r += o.add[j];
                    v[0].v[j] = to_stored<T>(activation(r));
                }
            }
        });
    }
    template <int VEC>
    __device__ void store_output(const int64_t (&at)[N], const Vector<T, VEC>& out, L2Policy pol) const {
        store_vector(y + at[Y], out, pol);
    }
};

// BATCH_NORMALIZATION_GRAD and _TRAINING_GRAD. Per group, with the mean operand m: sums of dy, dy * (x - m) and
// x - m. The scale gradient is sum(dy (x - m)) / sqrt(var + eps), the bias gradient sum(dy). The input gradient is
// dy * scale / sqrt(var + eps), or with training scale / sqrt(var + eps) * (dy - mean(dy) - (x - mean(x)) *
// mean(dy (x - mean(x))) / (var + eps)), as the CPU kernel has it (centered on the batch's own mean).
template <class T>
struct BatchNormGradOp {
    using Type = T;
    enum { X, Dy, Dx, Mean, Variance, Scale, N };
    static constexpr int kStreams = 2;
    static constexpr bool kWide = false;
    struct Coef {
        float a, mean_dy, batch_mean, k;
    };

    const T *x, *dy;
    T* dx;
    const T *mean, *variance, *scale;
    T *scale_grad, *bias_grad;
    float epsilon;
    bool training;

    static __device__ Triple combine(Triple p, Triple q) { return {p.a + q.a, p.b + q.b, p.c + q.c}; }

    template <int VEC>
    __device__ void gather(const int64_t (&at)[N], Vector<T, VEC> (&v)[2], L2Policy pol) const {
        v[0] = load_vector<VEC>(x + at[X], pol);
        v[1] = load_vector<VEC>(dy + at[Dy], pol);
    }

    template <class Team, int ITEMS, int VEC>
    __device__ Triple reduce(const Team& team, const Vector<T, VEC> (&v)[ITEMS][2], int held, uint64_t,
                             const int64_t (&base)[N]) const {
        const float m = load(mean + base[Mean]);
        Triple t{0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (k < held)
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    const float xc = v[k][0][j] - m, g = v[k][1][j];
                    t = {t.a + g, t.b + g * xc, t.c + xc};
                }
        return team.reduce(t, [](Triple p, Triple q) { return combine(p, q); });
    }

    __device__ Coef finish(Triple t, const int64_t (&base)[N], uint64_t group, uint64_t size, bool write) const {
        const float var = load(variance + base[Variance]) + epsilon, inv_std = 1.0f / sqrtf(var);
        if (write) {
            store(scale_grad + group, t.b * inv_std);
            store(bias_grad + group, t.a);
        }
        // sum(dy (x - mean(x))) = sum(dy (x - m)) - (mean(x) - m) sum(dy)
        const float n = float(size), shift = t.c / n;
        return {load(scale + base[Scale]) * inv_std, t.a / n, load(mean + base[Mean]) + shift,
                (t.b - shift * t.a) / n / var};
    }

    template <int VEC>
    struct Operands {};
    template <int VEC>
    __device__ Operands<VEC> operands(const int64_t (&)[N]) const { return {}; }

    template <int VEC>
    __device__ void output(Vector<T, VEC> (&v)[2], Operands<VEC>, Coef c) const {
#pragma unroll
        for (int j = 0; j < VEC; ++j)
            v[0].v[j] = to_stored<T>(training ? c.a * (v[1][j] - c.mean_dy - (v[0][j] - c.batch_mean) * c.k)
                                              : v[1][j] * c.a);
    }
    template <int VEC>
    __device__ void store_output(const int64_t (&at)[N], const Vector<T, VEC>& out, L2Policy pol) const {
        store_vector(dx + at[Dx], out, pol);
    }
};

// Layer normalization's layout: MVN over packed rows (x and y alike), whose scale, bias and addend are each absent
// or one row-long vector every row shares. A block per row; an element's offset in every operand is the row's
// start or none, plus its column, computed as it is used rather than held per operand: the held-group run kernel
// kept five operands' 64-bit offsets and their early loads, 56 registers and half a multiprocessor's threads, and ran
// layer norm [8,2048,4096] at 0.86x torch's kernel on the H200 (run M); this one ran it at 1.21x on an H100 (run N,
// bench/README.md, where neither a prefetch of the next row nor a ring of bulk-copied rows did better). The
// arithmetic is NormalizeOp's. Two vectors a thread fit 40 registers, six blocks of 256 a multiprocessor (ptxas -v,
// sm_90: 47 unbounded, spills at 32); four spill at 40 and keep the plain bound.
constexpr int rows_min_blocks(int team, int items) { return items <= 2 ? std::min(1536 / team, 32) : 1; }

template <class T, int TEAM, int ITEMS>
__global__ void __launch_bounds__(TEAM, rows_min_blocks(TEAM, ITEMS))
    normalize_rows_kernel(NormalizeOp<T> op, uint32_t row) {
    using Op = NormalizeOp<T>;
    constexpr int VEC = kVec<T>;
    const uint64_t start = uint64_t(blockIdx.x) * row;
    // Vector k's offsets: the row's start in x and y, the column alone in the shared operands.
    auto at = [&](int k, int64_t(&off)[Op::N]) {
        const uint32_t e = (threadIdx.x + uint32_t(k) * TEAM) * VEC;
        off[Op::X] = off[Op::Y] = int64_t(start + e);
        off[Op::Scale] = off[Op::Bias] = off[Op::Add] = e;
        return e < row;
    };
    Vector<T, VEC> v[ITEMS][1];
    int held = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int64_t off[Op::N];
        if (at(k, off)) {
            op.template gather<VEC>(off, v[k], L2Policy{});
            held = k + 1;
        }
    }
    const int64_t none[Op::N] = {};
    const typename Op::Coef c =
        op.finish(op.reduce(Team<TEAM>{unsigned(TEAM), threadIdx.x}, v, held, row, none), none, blockIdx.x, row, false);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int64_t off[Op::N];
        if (k < held && at(k, off)) {
            op.template output<VEC>(v[k], op.template operands<VEC>(off), c);
            op.template store_output<VEC>(off, v[k][0], L2Policy{});
        }
    }
}

// A block of the first run shape that holds a row, per row.
template <class T>
void launch_rows(const NormalizeOp<T>& op, uint64_t rows, uint32_t row, cudaStream_t stream) {
    with_run_shape<kVec<T>>(row, [&]<int S>() {
        constexpr RunShape shape = kRunShapes[S];
        normalize_rows_kernel<T, shape.team, shape.vectors><<<unsigned(rows), shape.team, 0, stream>>>(op, row);
    });
    check_launch("normalization");
}

// MVN (inputs x, scale?, bias?) and batch normalization training (inputs x, scale, bias, add?; outputs y, mean,
// variance).
class NormalizeKernel : public CudaKernel {
public:
    NormalizeKernel(const Node& node, const CudaDevice& device)
        : type_(node.inputs[0]->desc.data_type), sm_count_(device.sm_count()) {
        using Op = NormalizeOp<float>;
        const TensorDesc& x = node.inputs[0]->desc;
        std::vector<bool> reduced(x.rank(), false);
        std::array<std::vector<int64_t>, Op::N> st;
        if (const auto* d = dynamic_cast<const MeanVarianceNormalizationDesc*>(node.desc.get())) {
            for (uint32_t a : d->axes) reduced[a] = true;
            epsilon_ = d->epsilon, normalize_variance_ = d->normalize_variance, act_ = d->fused;
            normalize_mean_ = d->normalize_mean;
        } else {
            const auto& t = static_cast<const BatchNormalizationTrainingDesc&>(*node.desc);
            reduced = broadcast_dims(x, node.inputs[1]->desc);
            epsilon_ = t.epsilon, normalize_variance_ = true, act_ = t.fused, add_ = 3, statistics_ = true;
        }
        st[Op::X] = strides_at(&x, x.sizes);
        st[Op::Y] = strides_at(&node.outputs[0], x.sizes);
        st[Op::Scale] = strides_at(input_desc(node, 1), x.sizes);
        st[Op::Bias] = strides_at(input_desc(node, 2), x.sizes);
        st[Op::Add] = strides_at(input_desc(node, add_), x.sizes);
        plan_ = plan_groups<Op::N>(x.sizes, reduced, st, Op::kWide, type_, {Op::X, Op::Y},
                                   {Op::Scale, Op::Bias, Op::Add});
        // The optional operands present that run contiguously along the vectors of x load in vectors.
        const int vec = type_ == DataType::Float16 ? kVec<__half> : kVec<float>;
        for (int k : {Op::Scale, Op::Bias, Op::Add})
            if (plan_.g.runs_in_vectors(k, vec)) vector_operands_ |= 1u << k;
        // Rows: a group is one run a block holds (so x and y step by 1 along it), the rows packed one after another
        // in both, and each optional operand present a vector along the row that every row shares.
        const Groups<Op::N>& g = plan_.g;
        rows_ = plan_.runs && g.chunks == 1 && !statistics_ && g.outer.rank == 1 &&
                (g.outer.count == 1 || (g.outer.strides[Op::X][0] == int64_t(g.size) &&
                                        g.outer.strides[Op::Y][0] == int64_t(g.size)));
        const int inputs[] = {1, 2, add_};  // of Scale, Bias, Add
        for (int k : {Op::Scale, Op::Bias, Op::Add})
            if (input_desc(node, inputs[k - Op::Scale]))
                rows_ = rows_ && (vector_operands_ >> k & 1) && (g.outer.count == 1 || g.outer.strides[k][0] == 0);
    }

    uint64_t workspace_size() const override { return plan_.workspace(); }

    void enqueue(const LaunchArgs& a) const override {
        visit_float16_32(type_, [&]<class T>() {
            T* y = static_cast<T*>(a.outputs[0]);
            NormalizeOp<T> op{input_ptr<T>(a, 0),
                              y,
                              input_ptr<T>(a, 1),
                              input_ptr<T>(a, 2),
                              input_ptr<T>(a, add_),
                              statistics_ ? static_cast<T*>(a.outputs[1]) : nullptr,
                              statistics_ ? static_cast<T*>(a.outputs[2]) : nullptr,
                              epsilon_,
                              normalize_variance_,
                              normalize_mean_,
                              act_,
                              vector_operands_};
            auto in_vectors = [&](int k, const T* p) { return !(vector_operands_ >> k & 1) || aligned16(p); };
            const bool aligned = aligned16(op.x) && aligned16(y) && in_vectors(NormalizeOp<T>::Scale, op.scale) &&
                                 in_vectors(NormalizeOp<T>::Bias, op.bias) && in_vectors(NormalizeOp<T>::Add, op.add);
            if (rows_ && aligned) return launch_rows<T>(op, plan_.g.outer.count, uint32_t(plan_.g.size), a.stream);
            run_groups(plan_, op, aligned, a.workspace, sm_count_, a.stream, "normalization");
        });
    }

private:
    DataType type_;
    int sm_count_;
    int add_ = -1;  // the input index of the fused addend (training), -1 for none
    bool statistics_ = false, normalize_variance_ = true, normalize_mean_ = true;
    bool rows_ = false;             // layer normalization's layout: normalize_rows_kernel
    unsigned vector_operands_ = 0;  // NormalizeOp::vector_operands
    float epsilon_ = 0;
    FusedActivation act_;
    GroupPlan<NormalizeOp<float>::N> plan_;
};

// Inputs x, dy, mean, variance, scale; outputs dx, scale gradient, bias gradient.
class BatchNormGradKernel : public CudaKernel {
public:
    BatchNormGradKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const BatchNormalizationGradDesc&>(*node.desc)),
          type_(node.inputs[0]->desc.data_type),
          sm_count_(device.sm_count()) {
        using Op = BatchNormGradOp<float>;
        const TensorDesc& x = node.inputs[0]->desc;
        std::array<std::vector<int64_t>, Op::N> st;
        st[Op::X] = strides_at(&x, x.sizes);
        st[Op::Dy] = strides_at(input_desc(node, 1), x.sizes);
        st[Op::Dx] = strides_at(&node.outputs[0], x.sizes);
        st[Op::Mean] = strides_at(input_desc(node, 2), x.sizes);
        st[Op::Variance] = strides_at(input_desc(node, 3), x.sizes);
        st[Op::Scale] = strides_at(input_desc(node, 4), x.sizes);
        plan_ = plan_groups<Op::N>(x.sizes, broadcast_dims(x, node.inputs[2]->desc), st, Op::kWide, type_,
                                   {Op::X, Op::Dy, Op::Dx});
    }

    uint64_t workspace_size() const override { return plan_.workspace(); }

    void enqueue(const LaunchArgs& a) const override {
        visit_float16_32(type_, [&]<class T>() {
            BatchNormGradOp<T> op{input_ptr<T>(a, 0),           input_ptr<T>(a, 1),
                                  static_cast<T*>(a.outputs[0]), input_ptr<T>(a, 2),
                                  input_ptr<T>(a, 3),           input_ptr<T>(a, 4),
                                  static_cast<T*>(a.outputs[1]), static_cast<T*>(a.outputs[2]),
                                  desc_.epsilon,                desc_.training};
            run_groups(plan_, op, aligned16(op.x) && aligned16(op.dy) && aligned16(op.dx), a.workspace, sm_count_,
                       a.stream, "batch normalization gradient");
        });
    }

private:
    const BatchNormalizationGradDesc& desc_;
    DataType type_;
    int sm_count_;
    GroupPlan<BatchNormGradOp<float>::N> plan_;
};

// --- batch normalization (inference) ----------------------------------------------------------------------------

// y = act(scale * (x - mean) / sqrt(variance + eps) + bias), element-wise. A thread takes VEC elements along the
// innermost dimension (x and y contiguous there); the statistics step by their own strides, and are read once
// per vector where all of them are constant along it (`uniform`: per-channel statistics of NCHW).
template <class T>
struct BatchNormArgs {
    enum { Y, X, Mean, Variance, Scale, Bias, N };
    T* y;
    const T *x, *mean, *variance, *scale, *bias;
    int64_t last[N];
    bool uniform;
    float epsilon;
    FusedActivation act;
};

template <class T, int VEC>
__global__ void __launch_bounds__(kThreads) batch_norm_kernel(Indexer<BatchNormArgs<T>::N> ix, BatchNormArgs<T> a) {
    using A = BatchNormArgs<T>;
    const uint64_t vectors = ix.count / VEC;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
         i += uint64_t(gridDim.x) * blockDim.x) {
        int64_t off[A::N];
        ix.offsets(i * VEC, off);
        Vector<T, VEC> v = load_vector<VEC>(a.x + off[A::X]);
        float m = 0.0f, k = 0.0f, b = 0.0f;
        with_activation(a.act, [&](const auto& activation) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                if (j == 0 || !a.uniform) {
                    m = load(a.mean + off[A::Mean] + j * a.last[A::Mean]);
                    k = load(a.scale + off[A::Scale] + j * a.last[A::Scale]) /
                        sqrtf(load(a.variance + off[A::Variance] + j * a.last[A::Variance]) + a.epsilon);
                    b = load(a.bias + off[A::Bias] + j * a.last[A::Bias]);
                }
                v.v[j] = to_stored<T>(activation((v[j] - m) * k + b));
            }
        });
        store_vector(a.y + off[A::Y], v);
    }
}

class BatchNormKernel : public CudaKernel {
public:
    BatchNormKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const BatchNormalizationDesc&>(*node.desc)),
          type_(node.inputs[0]->desc.data_type),
          sm_count_(device.sm_count()) {
        const Sizes& sizes = node.outputs[0].sizes;
        std::array<std::vector<int64_t>, 6> st{strides_at(&node.outputs[0], sizes)};
        for (int k = 0; k < 5; ++k) st[k + 1] = strides_at(input_desc(node, k), sizes);
        ix_ = make_indexer<6>(sizes, st);
        const int inner = ix_.rank - 1, vec = type_ == DataType::Float16 ? kVec<__half> : kVec<float>;
        uniform_ = true;
        for (int k = 2; k < 6; ++k) {
            last_[k] = ix_.strides[k][inner];
            uniform_ = uniform_ && last_[k] == 0;
        }
        vectors_ = ix_.sizes[inner] % vec == 0;
        for (int k = 0; k < 2; ++k)
            vectors_ = vectors_ && ix_.strides[k][inner] == 1 && strides_multiple(ix_, k, vec, 1);
    }

    void enqueue(const LaunchArgs& a) const override {
        visit_float16_32(type_, [&]<class T>() {
            BatchNormArgs<T> args{static_cast<T*>(a.outputs[0]),
                                  static_cast<const T*>(a.inputs[0]),
                                  static_cast<const T*>(a.inputs[1]),
                                  static_cast<const T*>(a.inputs[2]),
                                  static_cast<const T*>(a.inputs[3]),
                                  static_cast<const T*>(a.inputs[4]),
                                  {},
                                  uniform_,
                                  desc_.epsilon,
                                  desc_.fused};
            std::copy(std::begin(last_), std::end(last_), args.last);
            auto launch = [&]<int VEC>() {
                batch_norm_kernel<T, VEC>
                    <<<blocks_for(ix_.count / VEC, sm_count_), kThreads, 0, a.stream>>>(ix_, args);
                check_launch("batch normalization");
            };
            if (vectors_ && aligned16(args.x) && aligned16(args.y)) launch.template operator()<kVec<T>>();
            else launch.template operator()<1>();
        });
    }

private:
    const BatchNormalizationDesc& desc_;
    DataType type_;
    int sm_count_;
    Indexer<6> ix_;
    int64_t last_[6] = {};
    bool uniform_ = true, vectors_ = false;
};

// --- local response normalization -------------------------------------------------------------------------------

// y = x / (bias + alpha / size * sum of x^2 over the window) ^ beta; the window spans (size - 1) / 2 elements
// before the center and size / 2 after, across channels or over the spatial plane, clipped to the tensor.
template <class T>
struct LrnOp {
    T* y;
    const T* x;
    int64_t channels, height, width, stride[4], before, after;
    bool cross_channel;
    float bias, alpha_over_size, beta;

    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const {
        const int64_t w = int64_t(i % uint64_t(width)), h = int64_t(i / uint64_t(width) % uint64_t(height));
        const int64_t c = int64_t(i / uint64_t(width * height) % uint64_t(channels));
        const int64_t n = int64_t(i / uint64_t(width * height * channels));
        const T* plane = x + n * stride[0];
        auto at = [&](int64_t cc, int64_t hh, int64_t ww) {
            return float(load(plane + cc * stride[1] + hh * stride[2] + ww * stride[3]));
        };
        float sum = 0.0f;
        if (cross_channel) {
            for (int64_t k = max(int64_t(0), c - before); k <= min(channels - 1, c + after); ++k)
                sum += at(k, h, w) * at(k, h, w);
        } else {
            for (int64_t r = max(int64_t(0), h - before); r <= min(height - 1, h + after); ++r)
                for (int64_t s = max(int64_t(0), w - before); s <= min(width - 1, w + after); ++s)
                    sum += at(c, r, s) * at(c, r, s);
        }
        store(y + i, at(c, h, w) / powf(bias + alpha_over_size * sum, beta));
    }
};

class LrnKernel : public CudaKernel {
public:
    LrnKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const LocalResponseNormalizationDesc&>(*node.desc)),
          type_(node.inputs[0]->desc.data_type),
          x_(node.inputs[0]->desc),
          sm_count_(device.sm_count()) {
        ix_ = make_indexer<1>(node.outputs[0].sizes, {signed_strides(node.outputs[0])});
    }

    void enqueue(const LaunchArgs& a) const override {
        visit_float16_32(type_, [&]<class T>() {
            const Strides st = x_.effective_strides();
            // DirectML's formula divides alpha by LocalSize in both modes.
            LrnOp<T> op{static_cast<T*>(a.outputs[0]),
                        static_cast<const T*>(a.inputs[0]),
                        x_.sizes[1],
                        x_.sizes[2],
                        x_.sizes[3],
                        {st[0], st[1], st[2], st[3]},
                        (int64_t(desc_.local_size) - 1) / 2,
                        int64_t(desc_.local_size) / 2,
                        desc_.cross_channel,
                        desc_.bias,
                        float(double(desc_.alpha) / double(desc_.local_size)),
                        desc_.beta};
            for_each<1>(ix_, op, sm_count_, a.stream, "local response normalization");
        });
    }

private:
    const LocalResponseNormalizationDesc& desc_;
    DataType type_;
    TensorDesc x_;
    int sm_count_;
    Indexer<1> ix_;
};

}  // namespace

void register_normalization_kernels(KernelTable& t) {
    add_kernel<BatchNormalizationDesc>(t, make_kernel<BatchNormKernel>);
    add_kernel<BatchNormalizationTrainingDesc>(t, make_kernel<NormalizeKernel>);
    add_kernel<BatchNormalizationGradDesc>(t, make_kernel<BatchNormGradKernel>);
    add_kernel<MeanVarianceNormalizationDesc>(t, make_kernel<NormalizeKernel>);
    add_kernel<LocalResponseNormalizationDesc>(t, make_kernel<LrnKernel>);
}

}  // namespace dml::cuda
