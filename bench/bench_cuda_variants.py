"""Times the candidate kernels of cuda_variants.cu against torch in one process (CUDA events, median of 7 x 20
launches): python3 bench/bench_cuda_variants.py path/to/cuda_variants.so [ln ew ln2 gn gnh gnc gnl gnt gnp gno] (an NVIDIA GPU; default
all; bench/README.md, runs K, N, O, P, Q and R)."""
import ctypes, sys, torch, torch.nn.functional as F
lib = ctypes.CDLL(sys.argv[1])
only = set(sys.argv[2:]) or {"ln", "ew", "ln2", "gn", "gnh", "gnc", "gnl", "gnt", "gnp", "gno"}
P, I, U64, Fl = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_float
lib.ln.argtypes = [I, I, I, I, P, P, P, P, I, I, Fl, P]
lib.ew.argtypes = [I, I, I, I, I, P, P, P, U64, P]
st = torch.cuda.current_stream().cuda_stream
def t(fn, reps=20):
    fn(); torch.cuda.synchronize()
    res = []
    for _ in range(7):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        for _ in range(reps): fn()
        b.record(); torch.cuda.synchronize()
        res.append(a.elapsed_time(b) / reps / 1e3)
    return sorted(res)[3]
def layer_norm_case(R, C):
    """Inputs, output, GB moved, float32 reference and torch's time of a layer norm of [R, C]."""
    x = torch.randn(R, C, dtype=torch.float16, device="cuda") * 2 + 3
    s = torch.randn(C, dtype=torch.float16, device="cuda"); b = torch.randn(C, dtype=torch.float16, device="cuda")
    gb = 2 * x.nbytes / 1e9
    tt = t(lambda: F.layer_norm(x, (C,), s, b, 1e-5))
    print(f"layer norm [{R},{C}] torch {gb / tt:.0f} GB/s")
    return x, s, b, torch.empty_like(x), gb, F.layer_norm(x.float(), (C,), s.float(), b.float(), 1e-5), tt
def group_norm_case(N, C, H, W, G=32, offset_half=False):
    """Inputs, output, GB moved, float32 reference and torch's time of a group norm of [N, C, H, W] (`offset_half`:
    the first half of the channels shifted by 4, groups whose halves differ)."""
    x = torch.randn(N, C, H, W, dtype=torch.float16, device="cuda") * 2 + 3
    if offset_half:
        x[:, : C // 2] += 4
    s = torch.randn(C, dtype=torch.float16, device="cuda"); b = torch.randn(C, dtype=torch.float16, device="cuda")
    ref = F.group_norm(x.float(), G, s.float(), b.float(), 1e-5)
    tt = t(lambda: F.group_norm(x, G, s, b, 1e-5), reps=5)
    return x, s, b, torch.empty_like(x), 2 * x.nbytes / 1e9, ref, tt
x = torch.empty(64 << 20, dtype=torch.float16, device="cuda"); y = torch.empty_like(x)
print(f"copy 128MiB->128MiB: {2 * x.nbytes / t(lambda: y.copy_(x)) / 1e9:.0f} GB/s")
for R, C, cfgs in [] if "ln" not in only else [(16384, 4096, [(128,4),(256,2),(512,1),(64,8)]), (16384, 8192, [(256,4),(512,2),(128,8),(1024,1)]),
                   (2048, 1280, [(32, 5)])]:
    x, s, b, y, gb, ref, tt = layer_norm_case(R, C)
    for T, K in cfgs:
        for mode in (0, 1):
            for minb in (1, 2, 4, 8, 12, 16):
                args = (T, K, mode, minb, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), R, C, 1e-5, st)
                if lib.ln(*args) != 0: continue
                torch.cuda.synchronize()
                err = (y.float() - ref).abs().max().item()
                tm = t(lambda: lib.ln(*args))
                print(f"  T{T} K{K} mode{mode} minb{minb}: {gb / tm:.0f} GB/s  {tt / tm:.2f}x  err {err:.3g}")
n = 64 << 20
a = torch.randn(n, dtype=torch.float16, device="cuda"); b2 = torch.randn_like(a); y = torch.empty_like(a)
for op, name, gb, fn in [] if "ew" not in only else [(0, "add", 3 * a.nbytes / 1e9, lambda: torch.add(a, b2, out=y)),
                         (1, "swish", 2 * a.nbytes / 1e9, lambda: F.silu(a, inplace=False))]:
    tt = t(fn)
    print(f"{name} [64M] torch {gb / tt:.0f} GB/s")
    for scheme, u, T, bps in [(0,2,256,8),(0,4,256,8),(0,2,256,16),(0,1,256,8),(0,2,512,4),(1,1,128,0),(1,2,128,0),
                              (1,4,128,0),(1,2,256,0),(1,4,256,0),(1,8,128,0)]:
        args = (op, scheme, u, T, bps, a.data_ptr(), b2.data_ptr(), y.data_ptr(), n // 8, st)
        if lib.ew(*args) != 0: print("missing", args[:5]); continue
        tm = t(lambda: lib.ew(*args))
        print(f"  scheme{scheme} U{u} T{T} bps{bps}: {gb / tm:.0f} GB/s  {tt / tm:.2f}x")

lib.ln2.argtypes = [I, I, I, I, P, P, P, P, I, I, Fl, P]
for R, C, cfgs in [] if "ln2" not in only else [
        (16384, 4096, [(256, 2, 0, b) for b in (4, 6, 8)] + [(128, 4, 0, b) for b in (8, 12)] +
         [(256, 2, sg, b) for sg, b in ((2, 4), (3, 4), (4, 4), (3, 6), (4, 6))] + [(128, 4, 3, 6), (128, 4, 4, 8)]),
        (16384, 8192, [(256, 4, 0, 4), (256, 4, 0, 6), (512, 2, 0, 3), (256, 4, 2, 3), (256, 4, 3, 3),
                       (512, 2, 2, 3), (512, 2, 3, 2)])]:
    x, s, b, y, gb, ref, tt = layer_norm_case(R, C)
    for T, K, stages, minb in cfgs:
        args = (T, K, stages, minb, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), R, C, 1e-5, st)
        y.zero_()
        if lib.ln2(*args) != 0: print("missing", args[:4]); continue
        torch.cuda.synchronize()
        err = (y.float() - ref).abs().max().item()
        tm = t(lambda: lib.ln2(*args))
        kind = "prefetch" if stages == 0 else f"bulk ring of {stages}"
        print(f"  T{T} K{K} {kind}, {minb} blocks/SM: {gb / tm:.0f} GB/s  {tt / tm:.2f}x  err {err:.3g}")

lib.gn.argtypes = [I, I, I, I, P, P, P, P, P, I, I, I, P]
if "gn" in only:
    print(f"L2: {lib.l2_bytes() / 2**20:.0f} MiB")
for N, C, H, W in [] if "gn" not in only else [(1, 128, 1024, 1024), (1, 512, 256, 256)]:
    G = 32
    x, s, b, y, gb, ref, tt = group_norm_case(N, C, H, W, G)
    group_mib = x.nbytes / G / 2**20
    print(f"group norm [{N},{C},{H},{W}] ({group_mib:.0f} MiB a group) torch {gb / tt:.0f} GB/s")
    ws = torch.empty(G * (C // G * H * W // 2048 + 1) * 3 + 64, dtype=torch.float32, device="cuda")
    for T, K in [(128, 2), (256, 2), (128, 4)]:
        for hint in (0, 1, 2):
            for slab in sorted({G, *(max(1, int(m // group_mib)) for m in (8, 16, 24, 32))}):
                if hint == 2 and slab == G: continue  # the same launches as hint 1
                args = (T, K, hint, slab, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), ws.data_ptr(),
                        G, C // G, H * W, st)
                y.zero_()
                if lib.gn(*args) != 0: print("missing", args[:4]); continue
                torch.cuda.synchronize()
                err = (y.float() - ref).abs().max().item()
                tm = t(lambda: lib.gn(*args))
                print(f"  T{T} K{K} hint{hint} slab {slab} groups ({slab * group_mib:.0f} MiB): {gb / tm:.0f} GB/s "
                      f"{tt / tm:.2f}x  err {err:.3g}")


def group_norm_sections(N, C, H, W, G=32):
    """group_norm_case (halves offset) with the swish reference too and the three passes' time (T128 K2; nan where
    they do not run), after printing both against torch's."""
    x, s, b, y, gb, ref, tt = group_norm_case(N, C, H, W, G, offset_half=True)
    ws = torch.empty(N * G * (C // G * H * W // 2048 + 1) * 3 + 64, dtype=torch.float32, device="cuda")
    args = (128, 2, 0, N * G, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), ws.data_ptr(), N * G, C // G,
            H * W, st)
    three = t(lambda: lib.gn(*args)) if N == 1 and lib.gn(*args) == 0 else float("nan")  # gn takes one image
    print(f"group norm [{N},{C},{H},{W}] ({x.nbytes / N / G / 2**20:.2f} MiB a group): torch {gb / tt:.0f} GB/s, "
          f"three passes (T128 K2) {gb / three:.0f} GB/s")
    return x, s, b, y, gb, [ref, F.silu(ref)], tt, three, ws

def candidate(label, fn, args, y, ref, gb, tt, three):
    """One candidate's row: y zeroed, one call (a nonzero return code: not run), its error against ref, then its time,
    GB/s and ratios to torch's time tt and the three passes' time."""
    y.zero_()
    rc = fn(*args)
    if rc != 0:
        print(f"  {label}: not run ({rc})")
        return
    torch.cuda.synchronize()
    err = (y.float() - ref).abs().max().item()
    tm = t(lambda: fn(*args))
    print(f"  {label}: {gb / tm:.0f} GB/s  {tt / tm:.2f}x torch, {three / tm:.2f}x three passes  err {err:.3g}")

sm_count = torch.cuda.get_device_properties(0).multi_processor_count
LARGE = [(1, 128, 1024, 1024), (1, 512, 256, 256), (1, 256, 512, 512)]

lib.gn_held.argtypes = [I, I, I, I, P, P, P, P, P, I, I, I, I, P]
for N, C, H, W in [] if "gnh" not in only else LARGE + [(2, 256, 512, 512)]:
    G = 32
    x, s, b, y, gb, refs, tt, three, ws = group_norm_sections(N, C, H, W, G)
    wsh = torch.zeros(N * G * (sm_count * 2 * 3 + 1) + 64, dtype=torch.float32, device="cuda")
    for T, act, bps, stages in [(256, 0, 1, 2), (256, 0, 1, 3), (256, 0, 1, 0), (256, 0, 2, 3), (256, 0, 2, 0),
                                (128, 0, 2, 0), (512, 0, 1, 0), (256, 1, 1, 0), (256, 1, 2, 0)]:
        ring = f"a ring of {stages}" if stages else "the largest ring"
        candidate(f"held on chip T{T} act{act} {bps} blocks/SM, {ring}", lib.gn_held,
                  (T, act, bps, stages, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), wsh.data_ptr(), N, G,
                   C // G, H * W, st), y, refs[act], gb, tt, three)

lib.gn_cluster.argtypes = [I, I, I, I, P, P, P, P, I, I, I, I, P, P]
for N, C, H, W in [] if "gnc" not in only else LARGE + [(2, 320, 64, 64), (2, 640, 32, 32)]:
    G = 32
    x, s, b, y, gb, refs, tt, three, ws = group_norm_sections(N, C, H, W, G)
    q = ctypes.c_int(0)
    for T, act, cs, kb in [(256, 0, 16, 200), (256, 0, 16, 100), (256, 0, 8, 200), (256, 0, 8, 100), (256, 0, 4, 200),
                           (256, 0, 2, 200), (256, 0, 1, 200), (512, 0, 16, 200), (512, 0, 8, 200), (512, 0, 16, 100),
                           (1024, 0, 16, 200), (256, 0, 16, 0), (256, 1, 16, 200), (256, 1, 8, 200)]:
        candidate(f"clusters T{T} act{act} C{cs} {kb} KiB", lib.gn_cluster,
                  (T, act, cs, kb, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), N, G, C // G, H * W, st,
                   ctypes.byref(q)), y, refs[act], gb, tt, three)
        print(f"    ({q.value} clusters resident)")

lib.gn_through_l2.argtypes = [I, I, I, I, I, I, P, P, P, P, P, I, I, I, I, P]
for N, C, H, W in [] if "gnl" not in only else LARGE + [(2, 320, 64, 64)]:
    G = 32
    x, s, b, y, gb, refs, tt, three, ws = group_norm_sections(N, C, H, W, G)
    wsl = torch.zeros(N * G * (sm_count * 4 * 3 + 1) + 64, dtype=torch.float32, device="cuda")
    for T, mv, hint, act, bps, kb in [(256, 8, 0, 0, 2, 8192), (256, 8, 1, 0, 2, 8192), (256, 8, 1, 0, 2, 4096),
                                      (256, 8, 1, 0, 2, 16384), (256, 8, 1, 0, 4, 8192), (256, 8, 1, 0, 1, 8192),
                                      (256, 4, 1, 0, 2, 8192), (256, 4, 1, 0, 4, 8192), (512, 4, 1, 0, 2, 8192),
                                      (512, 4, 1, 0, 1, 8192), (128, 8, 1, 0, 4, 8192), (128, 8, 1, 0, 8, 8192),
                                      (256, 8, 1, 1, 2, 8192)]:
        candidate(f"through L2 T{T} V{mv} hint{hint} act{act} {bps}/SM, steps of {kb} KiB", lib.gn_through_l2,
                  (T, mv, hint, act, bps, kb, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), wsl.data_ptr(),
                   N, G, C // G, H * W, st), y, refs[act], gb, tt, three)

lib.gn_tail.argtypes = [I, I, I, P, P, P, P, P, I, I, I, P]
for N, C, H, W in [] if "gnt" not in only else LARGE:
    G = 32
    x, s, b, y, gb, refs, tt, three, ws = group_norm_sections(N, C, H, W, G)
    for T, K in [(128, 2), (128, 4), (256, 2)]:
        for kb in (0, 8192, 16384, 24576, 32768, 40960):
            candidate(f"tail kept T{T} K{K} {kb} KiB", lib.gn_tail,
                      (T, K, kb, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), ws.data_ptr(), N * G, C // G,
                       H * W, st), y, refs[0], gb, tt, three)

def tail_kept_row(N, C, H, W, G, x, s, b, y, ws, refs, gb, tt, three):
    """Run P's best form (three passes, the outputs last to first, 8 MiB kept in L2) as a baseline row; gn_tail takes
    one image."""
    if N == 1:
        candidate("tail kept T128 K2 8192 KiB", lib.gn_tail, (128, 2, 8192, x.data_ptr(), s.data_ptr(), b.data_ptr(),
                  y.data_ptr(), ws.data_ptr(), N * G, C // G, H * W, st), y, refs[0], gb, tt, three)

lib.gn_producers.argtypes = [I, I, I, I, I, I, P, P, P, P, P, I, I, I, I, P]
for N, C, H, W in [] if "gnp" not in only else LARGE + [(2, 256, 512, 512)]:
    G = 32
    x, s, b, y, gb, refs, tt, three, ws = group_norm_sections(N, C, H, W, G)
    tail_kept_row(N, C, H, W, G, x, s, b, y, ws, refs, gb, tt, three)
    wsp = torch.zeros(N * G * (sm_count + 1) * 3 + 3 * N * G + 64, dtype=torch.float32, device="cuda")
    for T, v, hint, act, sets, lead in [(256, 8, 1, 0, 1, 2), (256, 8, 1, 0, 2, 2), (256, 8, 1, 0, 3, 3),
                                        (256, 8, 1, 0, 3, 4), (256, 8, 1, 0, 3, 6), (256, 8, 2, 0, 3, 4),
                                        (256, 4, 1, 0, 3, 4), (256, 4, 2, 0, 3, 4), (256, 16, 1, 0, 3, 4),
                                        (256, 8, 1, 0, 5, 6), (256, 8, 1, 0, 7, 8), (128, 8, 1, 0, 3, 4),
                                        (128, 8, 1, 0, 7, 8), (128, 16, 1, 0, 7, 8), (128, 16, 1, 0, 7, 12),
                                        (256, 8, 1, 1, 3, 4)]:
        candidate(f"producers T{T} V{v} hint{hint} act{act}, {sets} consumer sets, lead {lead}", lib.gn_producers,
                  (T, v, hint, act, sets, lead, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), wsp.data_ptr(),
                   N, G, C // G, H * W, st), y, refs[act], gb, tt, three)

lib.gn_once.argtypes = [I, I, I, I, I, I, P, P, P, P, P, I, I, I, I, P]
for N, C, H, W in [] if "gno" not in only else LARGE + [(2, 256, 512, 512)]:
    G = 32
    x, s, b, y, gb, refs, tt, three, ws = group_norm_sections(N, C, H, W, G)
    tail_kept_row(N, C, H, W, G, x, s, b, y, ws, refs, gb, tt, three)
    wso = torch.zeros(sm_count * 4 * 8 * 32 * 3 + 64, dtype=torch.float32, device="cuda")
    for T, K, act, bps, held_kb, keep_kb in [
            (1024, 2, 0, 1, 0, 0), (1024, 2, 0, 1, 0, 8192), (1024, 2, 0, 1, 224, 0), (1024, 2, 0, 1, 224, 8192),
            (1024, 2, 0, 1, 224, 16384), (1024, 2, 0, 1, 224, 24576), (1024, 2, 0, 1, 224, 32768),
            (1024, 1, 0, 1, 216, 16384), (1024, 1, 0, 1, 216, 24576), (512, 2, 0, 2, 112, 16384),
            (512, 4, 0, 1, 224, 16384), (512, 4, 0, 2, 96, 16384), (256, 4, 0, 4, 48, 16384), (256, 4, 0, 4, 48, 24576),
            (1024, 2, 1, 1, 224, 16384), (1024, 2, 1, 1, 224, 24576)]:
        candidate(f"once T{T} K{K} act{act} {bps}/SM, {held_kb} KiB held a block, {keep_kb} KiB kept in L2", lib.gn_once,
                  (T, K, act, bps, held_kb, keep_kb, x.data_ptr(), s.data_ptr(), b.data_ptr(), y.data_ptr(), wso.data_ptr(),
                   N, G, C // G, H * W, st), y, refs[act], gb, tt, three)
