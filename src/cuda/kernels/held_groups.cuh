// Operators over groups of elements (normalizations, softmax) whose groups a team of threads holds in registers:
// the team takes a group, or a chunk of a large one, reduces it and writes the outputs from those registers, so
// that a group that fits is read once and written once. Larger groups take three launches: partial results per
// chunk into the workspace; a warp per group combining its partials (in a fixed order: deterministic) into the
// group's total; then each chunk reads its group's total and writes, walking the chunks backwards so that it starts
// on those the cache may still hold from the first launch.
// Where the streamed operands are contiguous along the innermost dimension they move in 16-byte vectors.
// An operator supplies an Op (gather, operands, reduce, combine, finish, output, store_output: see held_group_item). A thread
// holds its elements as stored (float16 two to a register: fewer registers, more threads per multiprocessor).
#pragma once
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>

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
// The shapes of the run kernels' blocks, narrowest first: a run takes the first that holds it. Two 16-byte vectors
// of each stream a thread up to 256 threads, then four: a standalone layer norm on the H200 ran [16384,4096] fastest
// at 256 threads x 2 vectors a row (1.15x torch; 128 x 4: 1.08x) and [16384,8192] at 256 x 4 (bench/README.md,
// run K). Four vectors fit the 64 registers a thread has where a multiprocessor holds 1024 threads (ptxas -v,
// sm_90), now that an output vector's operands are one load.
struct RunShape {
    int team, vectors;
    constexpr uint64_t holds(int vec) const { return uint64_t(team) * vectors * vec; }  // elements
};
constexpr RunShape kRunShapes[] = {{32, 2}, {128, 2}, {256, 2}, {256, 4}, {512, 4}, {1024, 4}};
// The run shape whose chunks a group too large for one team is cut into: 256 threads x 4 vectors. Each work item's
// index arithmetic and coefficients are spread over twice the elements of 128 x 2, which left the passes bound by
// instructions (Nsight Compute, H100, group norm [1,512,256,256]: 20M and 34M instructions against a plain kernel's 9M
// and 11M); by kernel time [1,128,1024,1024] 1876 -> 1965 GB/s and [1,512,256,256] 1760 -> 1790-1801 (run P).
constexpr int kChunkShape = 3;
// The bytes of a chunked pass's last work items kept in L2 for the pass after it: a sixth of the H100's and H200's
// 50 MiB (on an H100, 8 MiB measured faster than 0 or 16-40 MiB: bench/README.md, run P).
constexpr uint64_t kL2Kept = 8ull << 20;

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
    // and a run shape (kRunShapes) holds it in vectors: a block per item, its team's size fixed at compile time, an
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
// the operands read or written element by element in full; `operands` those an output vector reads besides, which
// the vector kernels take where each runs in vectors too or is constant along them (per-channel scale and bias).
// The narrowest team holding a whole group takes it (teams of 32 to 1024 threads where `wide` and the streams move
// in vectors, else 32 or 256: scalar teams of 1024 would spill); larger groups are cut into chunks: the fewest equal
// ones per run that kRunShapes[kChunkShape] holds where the runs allow (at least kRunShapes[0]'s worth each), else
// chunks of kChunkTeam * kHeld elements.
template <int N>
GroupPlan<N> plan_groups(const Sizes& sizes, const std::vector<bool>& reduced,
                         const std::array<std::vector<int64_t>, N>& strides, bool wide, DataType type,
                         std::initializer_list<int> streams, std::initializer_list<int> operands = {}) {
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
    for (int k : operands)
        p.vectors = p.vectors && (g.last[k] == 0 || g.runs_in_vectors(k, vec));
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
    const uint64_t most = kRunShapes[std::size(kRunShapes) - 1].holds(vec), least = kRunShapes[0].holds(vec);
    // Run kernels index in 32 bits, a block per work item.
    const bool narrow = g.inner.count <= UINT32_MAX && g.outer.count <= uint64_t(INT32_MAX);
    p.runs = narrow && wide && g.chunks == 1 && g.inner.rank == 1 && g.size <= most;
    if (narrow && wide && g.chunks > 1) {
        const uint64_t target = kRunShapes[kChunkShape].holds(vec);
        const uint64_t run = g.inner.sizes[g.inner.rank - 1], fewest = (run + target - 1) / target;
        for (uint64_t pieces = fewest; pieces <= 2 * fewest && !p.runs; ++pieces)
            if (run % pieces == 0 && run / pieces % vec == 0 && run / pieces >= least &&
                g.outer.count * (g.size / (run / pieces)) <= uint64_t(INT32_MAX)) {
                g.chunk = run / pieces;
                g.chunks = g.size / g.chunk;  // runs divide the group: every chunk is whole
                p.runs = true;
            }
    }
    return p;
}

enum class Pass { Whole, Partials, Apply };
// A pass fixed at compile time, where a kernel takes a Pass: the compiler folds the others' code away.
template <Pass P>
struct FixedPass {
    __device__ constexpr operator Pass() const { return P; }
};

// A team of threads that takes a work item: a warp (MAX = 32: eight teams a block) or a whole block of `size` <=
// MAX threads (a multiple of 32). One kernel serves every block size up to MAX: fewer instantiations to compile.
template <int MAX>
struct Team {
    unsigned size, lane;
    template <class V, class F>
    __device__ V reduce(V v, F f) const { return team_reduce<MAX>(v, f, int(size / 32)); }
};

// Each group's `chunks` partials combined in a fixed order (deterministic) by a team of TEAM threads into
// totals[group] (Triple{} is the empty partial): once per group, where each chunk combining them for itself cost more
// instructions than the chunk's own elements. A warp per group where the groups are many; a block of 256 per group
// where they are few and long: group norm's 32 groups of 2048 partials took a warp 13 us of round trips (Nsight
// Compute, H200), a sixth of its first pass.
template <class Op, int TEAM>
__global__ void __launch_bounds__(256)
    combine_kernel(const Triple* partials, uint64_t groups, uint64_t chunks, Triple* totals) {
    const uint64_t group = uint64_t(blockIdx.x) * (256 / TEAM) + threadIdx.x / TEAM;
    const unsigned lane = threadIdx.x % TEAM;
    if (group >= groups) return;  // a team of 256 is its whole block: it returns whole
    auto merge = [](Triple p, Triple q) { return Op::combine(p, q); };
    const Triple* mine = partials + group * chunks;
    Triple t{0.0f, 0.0f, 0.0f};
    constexpr int kBatch = 4;  // loads in flight per lane
    for (uint64_t j = lane; j < chunks; j += TEAM * kBatch) {
        Triple q[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
            q[b] = j + TEAM * b < chunks ? mine[j + TEAM * b] : Triple{0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int b = 0; b < kBatch; ++b) t = merge(t, q[b]);
    }
    t = team_reduce<TEAM>(t, merge);
    if (lane == 0) totals[group] = t;
}

// Work item `item` is chunk item % chunks of group item / chunks, taken by a Team<TEAM>. Thread `lane` holds vectors
// lane, lane + team size, ... of its chunk. Whole: reduce the group and write it. Partials: reduce the chunk into
// ws[item] (written by lane 0). Apply: take the group's total, ws[group] (combine_kernel's), and write the chunk.
// RUNS: the plan's `runs`, with a block of exactly TEAM threads per item, indexed in 32 bits, and the pass a
// FixedPass: each run kernel compiles one pass's code, in fewer registers.
// Op supplies the streams (gather; operands, an output vector's other inputs, of type Operands<VEC>; output, which
// turns a vector's held streams and operands into its output in place; store_output), the reduction (reduce,
// combine) and the group's coefficients (finish, which also writes the per-group outputs, once: they are packed with
// size 1 on the reduced dimensions, so group g's element is at g).
template <class Op, int TEAM, int VEC, int ITEMS, bool RUNS, class P>
__device__ __forceinline__ void held_group_item(const Groups<Op::N>& g, const Op& op, const Team<TEAM>& team,
                                                P pass, uint64_t item, Triple* ws) {
    constexpr int N = Op::N;
    const unsigned lane = team.lane;
    uint64_t group, begin, end;
    int64_t base[N], first[N];  // the offsets of the group's first element, and (RUNS) of the item's
    if constexpr (RUNS) {
        const uint32_t chunks = uint32_t(g.chunks), gr = chunks == 1 ? uint32_t(item) : uint32_t(item) / chunks;
        const uint32_t b = (uint32_t(item) - gr * chunks) * uint32_t(g.chunk);
        group = gr, begin = b, end = b + uint32_t(g.chunk);  // runs' chunks are whole
        g.outer.offsets32(gr, base);
        g.inner.offsets32(b, first);
#pragma unroll
        for (int k = 0; k < N; ++k) first[k] += base[k];
    } else {
        group = g.chunks == 1 ? item : item / g.chunks, begin = (item - group * g.chunks) * g.chunk;
        end = min(g.size, begin + g.chunk);
        g.outer.offsets(group, base);
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
    // A group cut into chunks is read twice, Partials first to last and Apply last to first, and written once: those
    // streams may leave L2 first, except Partials' reads of the last kL2Kept bytes, which Apply reads first and should
    // find there. (Group norm [1,512,256,256] float16 on an H100, by kernel time: 1650 -> 1758 GB/s; run P.)
    L2Policy read{}, write{};
    if constexpr (RUNS)
        if (pass != Pass::Whole) {
            const uint64_t items = g.outer.count * g.chunks;
            const uint64_t kept = kL2Kept / (g.chunk * sizeof(typename Op::Type) * Op::kStreams);
            read = l2_policy(pass == Pass::Partials && item + kept >= items);
            write = l2_policy(false);
        }
    Vector<typename Op::Type, VEC> v[ITEMS][Op::kStreams];
    int held = 0;  // vectors held: a prefix of 0 .. ITEMS - 1
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int64_t off[N];
        if (at(k, off)) {
            op.template gather<VEC>(off, v[k], read);
            held = k + 1;
        }
    }
    // The other operands of the output vectors (scale, bias, addend). A run kernel's thread of two vectors that holds
    // a whole group loads them with its streams, in flight during the reduction, where loaded after it they had a
    // held layer norm row wait on them a round trip a vector; with more vectors, or the general kernel's 64-bit
    // offsets, they would spill (64 registers), and Apply has no reduction to hide them behind (held there, they
    // took its kernel from 48 to 56 registers), so elsewhere they load a vector at a time.
    const bool early = RUNS && ITEMS <= 2 && pass == Pass::Whole;
    typename Op::template Operands<VEC> o[ITEMS];
    if (early)
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            int64_t off[N];
            if (k < held && at(k, off)) o[k] = op.template operands<VEC>(off);
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
    // Every vector's output is computed (into its first stream's registers) before the first is stored: the
    // outputs may alias the other operands as far as the compiler knows, so a load after a store would wait for it,
    // a round trip a vector.
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int64_t off[N];
        if (k < held && at(k, off)) {
            if (!early) o[k] = op.template operands<VEC>(off);
            op.template output<VEC>(v[k], o[k], c);
        }
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int64_t off[N];
        if (k < held && at(k, off)) op.template store_output<VEC>(off, v[k][0], write);
    }
}

// One pass over every work item, a grid-stride loop; Apply takes the items last to first.
template <class Op, int TEAM, int VEC>
__global__ void __launch_bounds__(TEAM < 256 ? 256 : TEAM)
    held_group_kernel(Groups<Op::N> g, Op op, Pass pass, Triple* ws) {
    const Team<TEAM> team{TEAM == 32 ? unsigned(TEAM) : blockDim.x, threadIdx.x};
    const uint64_t items = g.outer.count * g.chunks;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.y + threadIdx.y; i < items;
         i += uint64_t(gridDim.x) * blockDim.y)
        held_group_item<Op, TEAM, VEC, kHeld / VEC, false>(g, op, team, pass, pass == Pass::Apply ? items - 1 - i : i,
                                                           ws);
}

// The plan's runs, pass PASS: a block of TEAM threads per work item, each holding ITEMS vectors, Apply's items last
// to first. Run blocks fill a multiprocessor's 1024 threads at 64 registers each: on the H200 that measured faster
// than 768 threads with more registers (layer norm [8,2048,4096] 2153 against 2089 GB/s, softmax and group norm
// alike or better, when the kernels spilled at 64).
template <class Op, int TEAM, int VEC, int ITEMS, Pass PASS>
__global__ void __launch_bounds__(TEAM, 1024 / TEAM) held_run_kernel(Groups<Op::N> g, Op op, Triple* ws) {
    const uint32_t item = PASS == Pass::Apply ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    held_group_item<Op, TEAM, VEC, ITEMS, true>(g, op, Team<TEAM>{unsigned(TEAM), threadIdx.x}, FixedPass<PASS>{},
                                                item, ws);
}

// launch(pass, ws) for the passes of the plan's groups: Whole where a team holds a group, else Partials (into the
// workspace's partials), the groups' totals combined, then Apply (reading them).
template <class Op, class F>
void for_each_pass(const Groups<Op::N>& g, Triple* ws, cudaStream_t stream, const char* what, F&& launch) {
    if (g.chunks == 1) return launch(Pass::Whole, ws);
    launch(Pass::Partials, ws);
    Triple* totals = ws + g.outer.count * g.chunks;
    const uint64_t groups = g.outer.count;
    if (g.chunks >= 256 && groups <= 1024) {
        combine_kernel<Op, 256><<<unsigned(groups), 256, 0, stream>>>(ws, groups, g.chunks, totals);
    } else {
        const unsigned blocks = unsigned((groups + 7) / 8);  // 8 warps a block
        combine_kernel<Op, 32><<<blocks, 256, 0, stream>>>(ws, groups, g.chunks, totals);
    }
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

// f.template operator()<S>() with S the first of kRunShapes that holds `elements` in vectors of VEC (the last where
// none does).
template <int VEC, int S = 0, class F>
void with_run_shape(uint64_t elements, F&& f) {
    if constexpr (S + 1 < int(std::size(kRunShapes)))
        if (elements > kRunShapes[S].holds(VEC)) return with_run_shape<VEC, S + 1>(elements, f);
    f.template operator()<S>();
}

// The plan's runs: a block of the first run shape that holds an item per item (plan_groups keeps the items within
// a grid's 2^31 - 1 blocks). Groups cut into several chunks are cut for kRunShapes[kChunkShape] or the shapes
// before it: only those compile the Partials and Apply passes.
template <class Op, int VEC>
void launch_runs(const Groups<Op::N>& g, const Op& op, Triple* ws, cudaStream_t stream, const char* what) {
    with_run_shape<VEC>(g.chunk, [&]<int S>() {
        constexpr RunShape shape = kRunShapes[S];
        const unsigned blocks = unsigned(g.outer.count * g.chunks);
        auto launch = [&]<Pass P>(Triple* w) {
            held_run_kernel<Op, shape.team, VEC, shape.vectors, P><<<blocks, shape.team, 0, stream>>>(g, op, w);
            check_launch(what);
        };
        for_each_pass<Op>(g, ws, stream, what, [&](Pass pass, Triple* w) {
            if (pass == Pass::Whole) return launch.template operator()<Pass::Whole>(w);
            if constexpr (S <= kChunkShape) {
                if (pass == Pass::Partials) return launch.template operator()<Pass::Partials>(w);
                return launch.template operator()<Pass::Apply>(w);
            } else {
                throw std::logic_error(std::string(what) + ": a chunk larger than plan_groups cuts");
            }
        });
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
