// Operators over groups of elements (normalizations, softmax) whose groups a team of threads holds in registers:
// the team takes a group, or a chunk of a large one, reduces it and writes the outputs from those registers, so
// that a group that fits is read once and written once. Larger groups take three launches: partial results per
// chunk into the workspace; a warp per group combining its partials (in a fixed order: deterministic) into the
// group's total; then each chunk reads its group's total and writes, walking the chunks backwards so that it starts
// on those the cache may still hold from the first launch.
// Where the streamed operands are contiguous along the innermost dimension they move in 16-byte vectors.
// An operator supplies an Op (gather, reduce, combine, finish, emit: see held_group_item). A thread holds its
// elements as stored (float16 two to a register: fewer registers, more threads per multiprocessor).
#pragma once
#include <algorithm>
#include <cstddef>
#include <iterator>

#include "group.cuh"

namespace dml::cuda {

// --- 16-byte vectors -----------------------------------------------------------------------------------------

template <class T> constexpr int kVec = int(16 / sizeof(T));

// Operand k's strides in `ix` are multiples of vec, the innermost `skip` dimensions left out.
template <int N>
bool strides_multiple(const Indexer<N>& ix, int k, int vec, int skip = 0) {
    for (int d = 0; d + skip < ix.rank; ++d)
        if (ix.strides[k][d] % vec) return false;
    return true;
}

// --- groups held in registers ---------------------------------------------------------------------------------

constexpr int kHeld = 16;         // elements of each stream one thread holds in registers
constexpr int kChunkTeam = 256;   // the team of a chunk of a group too large for one team
constexpr int kRunVectors = 4;    // 16-byte vectors of each stream one thread of a run team holds
constexpr int kRunTeams[] = {32, 128, 256, 512};
// The run team whose chunks a group too large for one team is cut into: the chunks' two passes re-read the group
// anyway, and on the H200 teams of 128 (more blocks a multiprocessor) took group norm [1,128,1024,1024] from 693 to
// 906 GB/s against teams of 512 (256: 884; measured at six blocks of 128 a multiprocessor, 963 at eight).
constexpr int kChunkRunTeam = 128;

// Three floats a team reduces and the workspace keeps between launches: a chunk's partial statistics, or a
// group's total.
struct Triple {
    float a, b, c;
};
__device__ __forceinline__ Triple shuffle_xor(Triple v, int m) {
    return {__shfl_xor_sync(0xffffffffu, v.a, m), __shfl_xor_sync(0xffffffffu, v.b, m),
            __shfl_xor_sync(0xffffffffu, v.c, m)};
}

template <int N>
struct Groups {
    Indexer<N> outer;  // group g -> offsets of its first element in every operand
    Indexer<N> inner;  // element e of a group -> offsets from the group's first element
    uint64_t size;     // elements per group
    uint64_t chunk;    // elements per work item: the whole group, or a multiple of the vector width
    uint64_t chunks;   // work items per group
    int64_t last[N];   // strides along the innermost inner dimension: the elements of a vector step by them

    // Whether operand k runs contiguously along vectors of `vec` elements, each starting at a multiple of vec.
    bool runs_in_vectors(int k, int vec) const {
        return last[k] == 1 && strides_multiple(outer, k, vec) && strides_multiple(inner, k, vec, 1);
    }
};

// How a node's groups run, settled at compile.
template <int N>
struct GroupPlan {
    Groups<N> g;       // the streams move vectors where `vectors` and their addresses allow (checked at dispatch)
    Groups<N> scalar;  // where they do not: g's groups, cut for teams of 32 or 256 moving elements
    int team, scalar_team;
    bool vectors;  // the streams' layout allows vectors
    // Every work item lies in one run of the innermost dimension of its group, where each operand steps by `last`,
    // and a run team (kRunTeams) holds it in vectors: a block per item, its team's size fixed at compile time, an
    // element's offsets one multiply-add from the item's first. Either the group is one run that a team holds (layer
    // norm, softmax over the last axis, instance norm), or a group too large for one team is cut into chunks that
    // divide its runs (group norm: a run is a channel's image). Each thread holds more elements than in the general
    // kernel, whose index arithmetic and reductions over any team left these instruction-bound (Nsight Compute,
    // H200: 72-81% of the issue rate, 22-23% of DRAM bandwidth, layer norm [8,2048,4096] and group norm).
    bool runs;

    // The workspace of groups cut into chunks: the chunks' partials, then the groups' totals.
    uint64_t chunks() const { return std::max(g.chunks, scalar.chunks); }
    uint64_t workspace() const { return chunks() > 1 ? g.outer.count * (chunks() + 1) * sizeof(Triple) : 0; }
};

// Groups over the `reduced` dimensions of `sizes`, for N operands viewed at `sizes` through `strides`. `streams` are
// the operands read or written element by element in full. The narrowest team holding a whole group takes it
// (teams of 32 to 1024 threads where `wide` and the streams move in vectors, else 32 or 256: scalar teams of 1024
// would spill); larger groups are cut into chunks: the fewest equal ones per run that a team of kChunkRunTeam holds
// where the runs allow (at least a warp's worth each), else chunks of kChunkTeam * kHeld elements.
template <int N>
GroupPlan<N> plan_groups(const Sizes& sizes, const std::vector<bool>& reduced,
                         const std::array<std::vector<int64_t>, N>& strides, bool wide, DataType type,
                         std::initializer_list<int> streams) {
    Sizes outer_sizes, inner_sizes;
    std::array<std::vector<int64_t>, N> outer, inner;
    for (size_t d = 0; d < sizes.size(); ++d) {
        (reduced[d] ? inner_sizes : outer_sizes).push_back(sizes[d]);
        for (int k = 0; k < N; ++k) (reduced[d] ? inner : outer)[k].push_back(strides[k][d]);
    }
    auto fill = [](Sizes& s, std::array<std::vector<int64_t>, N>& st) {  // no dimension: one of size 1
        if (!s.empty()) return;
        s = {1};
        for (auto& v : st) v = {0};
    };
    fill(outer_sizes, outer);
    fill(inner_sizes, inner);
    GroupPlan<N> p{};
    Groups<N>& g = p.g;
    g.outer = make_indexer<N>(outer_sizes, outer);
    g.inner = make_indexer<N>(inner_sizes, inner);
    g.size = g.inner.count;
    for (int k = 0; k < N; ++k) g.last[k] = g.inner.strides[k][g.inner.rank - 1];
    // Vectors never straddle the innermost dimension (its size is a multiple of theirs, as is every chunk).
    const int vec = type == DataType::Float16 ? kVec<__half> : kVec<float>;
    p.vectors = g.inner.sizes[g.inner.rank - 1] % vec == 0;
    for (int k : streams)
        p.vectors = p.vectors && g.runs_in_vectors(k, vec);
    wide = wide && p.vectors;
    auto cut = [](Groups<N>& h, bool wide_teams) {  // the team that takes h's groups, or its chunks
        for (int team : {32, 64, 128, 256, 512, 1024})
            if ((wide_teams || team == 32 || team == 256) && uint64_t(team) * kHeld >= h.size) {
                h.chunk = h.size, h.chunks = 1;
                return team;
            }
        h.chunk = uint64_t(kChunkTeam) * kHeld;
        h.chunks = (h.size + h.chunk - 1) / h.chunk;
        return kChunkTeam;
    };
    p.scalar = g;
    p.scalar_team = cut(p.scalar, false);
    p.team = cut(g, wide);
    const uint64_t most = uint64_t(kRunTeams[std::size(kRunTeams) - 1]) * kRunVectors * vec;
    const uint64_t least = uint64_t(kRunTeams[0]) * kRunVectors * vec;
    p.runs = wide && g.chunks == 1 && g.inner.rank == 1 && g.size <= most;
    if (wide && g.chunks > 1) {
        const uint64_t target = uint64_t(kChunkRunTeam) * kRunVectors * vec;
        const uint64_t run = g.inner.sizes[g.inner.rank - 1], fewest = (run + target - 1) / target;
        for (uint64_t pieces = fewest; pieces <= 2 * fewest && !p.runs; ++pieces)
            if (run % pieces == 0 && run / pieces % vec == 0 && run / pieces >= least) {
                g.chunk = run / pieces;
                g.chunks = g.size / g.chunk;  // runs divide the group: every chunk is whole
                p.runs = true;
            }
    }
    return p;
}

enum class Pass { Whole, Partials, Apply };

// A team of threads that takes a work item: a warp (MAX = 32: eight teams a block) or a whole block of `size` <=
// MAX threads (a multiple of 32). One kernel serves every block size up to MAX: fewer instantiations to compile.
template <int MAX>
struct Team {
    unsigned size, lane;
    template <class V, class F>
    __device__ V reduce(V v, F f) const { return team_reduce<MAX>(v, f, int(size / 32)); }
};

// Each group's `chunks` partials combined in a fixed order (deterministic) by a warp into totals[group] (Triple{}
// is the empty partial): once per group, where each chunk combining them for itself cost more instructions than
// the chunk's own elements.
constexpr int kCombineWarps = 8;  // groups a block of combine_kernel takes, a warp each

template <class Op>
__global__ void __launch_bounds__(32 * kCombineWarps)
    combine_kernel(const Triple* partials, uint64_t groups, uint64_t chunks, Triple* totals) {
    const uint64_t group = uint64_t(blockIdx.x) * kCombineWarps + threadIdx.x / 32;
    const unsigned lane = threadIdx.x % 32;
    if (group >= groups) return;
    auto merge = [](Triple p, Triple q) { return Op::combine(p, q); };
    const Triple* mine = partials + group * chunks;
    Triple t{0.0f, 0.0f, 0.0f};
    constexpr int kBatch = 4;  // loads in flight per lane
    for (uint64_t j = lane; j < chunks; j += 32 * kBatch) {
        Triple q[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) q[b] = j + 32 * b < chunks ? mine[j + 32 * b] : Triple{0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int b = 0; b < kBatch; ++b) t = merge(t, q[b]);
    }
    t = team_reduce<32>(t, merge);
    if (lane == 0) totals[group] = t;
}

// Work item `item` is chunk item % chunks of group item / chunks, taken by a Team<TEAM>. Thread `lane` holds vectors
// lane, lane + team size, ... of its chunk. Whole: reduce the group and write it. Partials: reduce the chunk into
// ws[item] (written by lane 0). Apply: take the group's total, ws[group] (combine_kernel's), and write the chunk.
// RUNS: the plan's `runs`, with a block of exactly TEAM threads per item.
// Op supplies the streams (gather / emit), the reduction (reduce, combine) and the group's coefficients (finish,
// which also writes the per-group outputs, once: they are packed with size 1 on the reduced dimensions, so group
// g's element is at g).
template <class Op, int TEAM, int VEC, bool RUNS>
__device__ __forceinline__ void held_group_item(const Groups<Op::N>& g, const Op& op, const Team<TEAM>& team,
                                                Pass pass, uint64_t item, Triple* ws) {
    constexpr int N = Op::N, ITEMS = RUNS ? kRunVectors : kHeld / VEC;
    const unsigned lane = team.lane;
    const uint64_t group = g.chunks == 1 ? item : item / g.chunks, begin = (item - group * g.chunks) * g.chunk;
    const uint64_t end = min(g.size, begin + g.chunk);
    int64_t base[N], first[N];  // the offsets of the group's first element, and (RUNS) of the item's
    g.outer.offsets(group, base);
    if constexpr (RUNS) {
        g.inner.offsets(begin, first);
#pragma unroll
        for (int k = 0; k < N; ++k) first[k] += base[k];
    }
    // The offsets of this thread's vector k in every operand; false past the chunk.
    auto at = [&](int k, int64_t(&off)[N]) {
        if constexpr (RUNS) {
            const uint32_t e = (lane + uint32_t(k) * TEAM) * VEC;
            if (e >= uint32_t(end - begin)) return false;
#pragma unroll
            for (int i = 0; i < N; ++i) off[i] = first[i] + int64_t(e) * g.last[i];
        } else {
            const uint64_t e = begin + (lane + uint64_t(k) * team.size) * VEC;
            if (e >= end) return false;
            g.inner.offsets(e, off);
#pragma unroll
            for (int i = 0; i < N; ++i) off[i] += base[i];
        }
        return true;
    };
    Vector<typename Op::Type, VEC> v[ITEMS][Op::kStreams];
    int held = 0;  // vectors held: a prefix of 0 .. ITEMS - 1
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int64_t off[N];
        if (at(k, off)) {
            op.template gather<VEC>(off, v[k]);
            held = k + 1;
        }
    }
    Triple total;
    if (pass == Pass::Apply) {
        total = ws[group];
    } else {
        total = op.reduce(team, v, held, end - begin, base);
        if (pass == Pass::Partials) {
            if (lane == 0) ws[item] = total;
            return;
        }
    }
    const typename Op::Coef c = op.finish(total, base, group, g.size, begin == 0 && lane == 0);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int64_t off[N];
        if (k < held && at(k, off)) op.template emit<VEC>(off, g.last, v[k], c);
    }
}

// One pass over every work item, a grid-stride loop; Apply takes the items last to first. Run teams fill a
// multiprocessor's 1024 threads at 64 registers each, with some spills (MVN's float16 item: 52 / 140 bytes a
// thread, ptxas -v, sm_90): on the H200 that measured faster than 768 threads and no spills (layer norm
// [8,2048,4096] 2153 against 2089 GB/s, softmax and group norm alike or better).
template <class Op, int TEAM, int VEC, bool RUNS = false>
__global__ void __launch_bounds__(RUNS ? TEAM : (TEAM < 256 ? 256 : TEAM), RUNS ? 1024 / TEAM : 1)
    held_group_kernel(Groups<Op::N> g, Op op, Pass pass, Triple* ws) {
    const Team<TEAM> team{RUNS || TEAM == 32 ? unsigned(TEAM) : blockDim.x, threadIdx.x};
    const uint64_t items = g.outer.count * g.chunks;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.y + threadIdx.y; i < items;
         i += uint64_t(gridDim.x) * blockDim.y)
        held_group_item<Op, TEAM, VEC, RUNS>(g, op, team, pass, pass == Pass::Apply ? items - 1 - i : i, ws);
}

// launch(pass, ws) for the passes of the plan's groups: Whole where a team holds a group, else Partials (into the
// workspace's partials), the groups' totals combined, then Apply (reading them).
template <class Op, class F>
void for_each_pass(const Groups<Op::N>& g, Triple* ws, cudaStream_t stream, const char* what, F&& launch) {
    if (g.chunks == 1) return launch(Pass::Whole, ws);
    launch(Pass::Partials, ws);
    Triple* totals = ws + g.outer.count * g.chunks;
    const unsigned blocks = unsigned((g.outer.count + kCombineWarps - 1) / kCombineWarps);
    combine_kernel<Op><<<blocks, 32 * kCombineWarps, 0, stream>>>(ws, g.outer.count, g.chunks, totals);
    check_launch(what);
    launch(Pass::Apply, totals);
}

// The group kernel with teams of at most TEAM threads, `team` threads each.
template <class Op, int TEAM, int VEC>
void launch_passes(const Groups<Op::N>& g, unsigned team, const Op& op, Triple* ws, int sm_count,
                   cudaStream_t stream, const char* what) {
    const unsigned per_block = TEAM == 32 ? 8 : 1;
    const uint64_t want = (g.outer.count * g.chunks + per_block - 1) / per_block;
    const unsigned blocks = unsigned(std::clamp<uint64_t>(want, 1, uint64_t(std::max(sm_count, 1)) * 64));
    for_each_pass<Op>(g, ws, stream, what, [&](Pass pass, Triple* w) {
        held_group_kernel<Op, TEAM, VEC><<<blocks, dim3(team, per_block), 0, stream>>>(g, op, pass, w);
        check_launch(what);
    });
}

// Warps, blocks of 256, and (wide operators moving vectors) blocks of 64 to 1024 threads.
template <class Op, int VEC>
void launch_team(const Groups<Op::N>& g, int team, const Op& op, Triple* ws, int sm_count, cudaStream_t stream,
                 const char* what) {
    if (team == 32) return launch_passes<Op, 32, VEC>(g, 32, op, ws, sm_count, stream, what);
    if constexpr (Op::kWide && VEC > 1) launch_passes<Op, 1024, VEC>(g, team, op, ws, sm_count, stream, what);
    else launch_passes<Op, 256, VEC>(g, 256, op, ws, sm_count, stream, what);
}

// The plan's runs: a block of the narrowest run team that holds an item per item (a grid-stride loop past 2^31).
template <class Op, int VEC, int T = 0>
void launch_runs(const Groups<Op::N>& g, const Op& op, Triple* ws, cudaStream_t stream, const char* what) {
    constexpr int team = kRunTeams[T];
    if constexpr (T + 1 < int(std::size(kRunTeams)))
        if (g.chunk > uint64_t(team) * kRunVectors * VEC) return launch_runs<Op, VEC, T + 1>(g, op, ws, stream, what);
    const unsigned blocks = unsigned(std::min<uint64_t>(g.outer.count * g.chunks, INT32_MAX));
    for_each_pass<Op>(g, ws, stream, what, [&](Pass pass, Triple* w) {
        held_group_kernel<Op, team, VEC, true><<<blocks, team, 0, stream>>>(g, op, pass, w);
        check_launch(what);
    });
}

// Runs the plan; `aligned`: the streams' addresses allow vectors.
template <class Op>
void run_groups(const GroupPlan<Op::N>& p, const Op& op, bool aligned, void* ws, int sm_count, cudaStream_t stream,
                const char* what) {
    auto* triples = static_cast<Triple*>(ws);  // the chunks' partials, then the groups' totals
    constexpr int vec = kVec<typename Op::Type>;
    if constexpr (Op::kWide)  // runs are planned for wide operators only; they move vectors
        if (p.runs && aligned) return launch_runs<Op, vec>(p.g, op, triples, stream, what);
    if (p.vectors && aligned) launch_team<Op, vec>(p.g, p.team, op, triples, sm_count, stream, what);
    else launch_team<Op, 1>(p.scalar, p.scalar_team, op, triples, sm_count, stream, what);
}

}  // namespace dml::cuda
