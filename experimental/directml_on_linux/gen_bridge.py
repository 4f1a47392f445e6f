#!/usr/bin/env python3
"""Generate the bridge's System V COM forwarding thunks from a D3D12 implementation's headers.

libdirectml.so (the WSL build) was compiled against DirectX-Headers' WSL
adapter, where STDMETHODCALLTYPE is empty: COM methods use the System V x86-64
calling convention and aggregate return values are returned *by value*
(hidden return slot in %rdi, `this` in %rsi, or rax:rdx for <=16-byte PODs).
vkd3d-proton's native build (System V) and vkd3d (`__attribute__((ms_abi))`)
both implement the interfaces with the MSVC aggregate-return convention
(explicit `RetVal *__ret` after `This`).

This script reads the implementation's widl-generated C vtable declarations
(`typedef struct IFooVtbl { ... } IFooVtbl;`) and, for every interface and
method, emits a System V thunk that:
  * unwraps bridge objects passed as interface-pointer arguments,
  * unwraps arrays of interface pointers (`IFoo *const *name` + count param),
  * converts explicit `__ret` aggregate returns into by-value returns,
  * converts wide-string arguments from DirectML's wchar_t (32-bit here) to
    the implementation's WCHAR (16-bit in vkd3d-proton, wchar_t in vkd3d),
  * wraps interface pointers returned through `REFIID riid, void **ppv` pairs
    and typed `IFoo **` out-parameters,
  * forwards everything else unchanged (GCC emits the call in the
    implementation's convention: its function-pointer types carry it).
Methods listed in OVERRIDES are implemented by hand in bridge.c (structs that
embed interface pointers, SetPrivateDataInterface, Release bookkeeping, ...).

Usage: gen_bridge.py OUT.c [include dir of vkd3d-proton or vkd3d (default /usr/include/vkd3d)]
"""
import os
import re
import sys

INC = sys.argv[2] if len(sys.argv) > 2 else "/usr/include/vkd3d"
HEADERS = ["vkd3d_d3dcommon.h", "vkd3d_d3d12.h", "vkd3d_d3d12sdklayers.h"]
# Only interfaces matched by FAMILY_SPECS are bridged; QueryInterface for any
# other IID is refused (E_NOINTERFACE) so DirectML never calls past a vtable.

# Hand-written in bridge.c: method name -> C function name prefix.
OVERRIDES = {
    "QueryInterface": "bridge_QueryInterface",
    "AddRef": "bridge_AddRef",
    "Release": "bridge_Release",
    "SetPrivateDataInterface": "bridge_SetPrivateDataInterface",
    "ResourceBarrier": "bridge_ResourceBarrier",
    "CreateComputePipelineState": "bridge_CreateComputePipelineState",
    "CreateGraphicsPipelineState": "bridge_CreateGraphicsPipelineState",
    "CopyTextureRegion": "bridge_CopyTextureRegion",
    "CheckFeatureSupport": "bridge_CheckFeatureSupport",
    "GetPrivateData": "bridge_GetPrivateData",
}

# Object families: every vkd3d object is exposed through the most derived
# vtable the vkd3d headers in use know for its family (vtables are
# prefix-compatible). Members are matched by regex, so newer vkd3d headers
# (more ID3D12DeviceN / ID3D12GraphicsCommandListN versions) are picked up.
FAMILY_SPECS = [
    ("ID3D12Device", r"ID3D12Device\d*"),
    ("ID3D12GraphicsCommandList", r"ID3D12(?:Graphics)?CommandList\d*"),
    ("ID3D12Heap", r"ID3D12Heap\d*"),
    ("ID3D12Resource", r"ID3D12Resource\d*"),
    ("ID3D12DescriptorHeap", r"ID3D12DescriptorHeap"),
    ("ID3D12QueryHeap", r"ID3D12QueryHeap"),
    ("ID3D12CommandSignature", r"ID3D12CommandSignature"),
    ("ID3D12CommandQueue", r"ID3D12CommandQueue\d*"),
    ("ID3D12RootSignature", r"ID3D12RootSignature"),
    ("ID3D12PipelineState", r"ID3D12PipelineState"),
    ("ID3D12Fence", r"ID3D12Fence\d*"),
    ("ID3D12CommandAllocator", r"ID3D12CommandAllocator"),
    ("ID3D12RootSignatureDeserializer", r"ID3D12RootSignatureDeserializer"),
    ("ID3D12VersionedRootSignatureDeserializer", r"ID3D12VersionedRootSignatureDeserializer"),
    ("ID3D12PipelineLibrary", r"ID3D12PipelineLibrary\d*"),
    ("ID3D12MetaCommand", r"ID3D12MetaCommand"),
    ("ID3D12ShaderCacheSession", r"ID3D12ShaderCacheSession"),
    ("ID3D10Blob", r"ID3D10Blob"),
    ("ID3D12Debug", r"ID3D12Debug\d*"),
    ("IUnknown", r"IUnknown"),
]


def families(ifaces):
    """family name -> (most derived interface, [member interfaces])"""
    out = {}
    for fam, rx in FAMILY_SPECS:
        members = [n for n in ifaces if re.fullmatch(rx, n)]
        if not members:
            continue
        top = max(members, key=lambda n: len(ifaces[n]))
        out[fam] = (top, sorted(members, key=lambda n: len(ifaces[n])))
    return out


# Wide-string parameter types: DirectML passes wchar_t strings (see bridge_wstr).
WIDE_STRINGS = ("LPCWSTR", "const WCHAR *")

IFACE_RE = re.compile(r"\b(I(?:D3D12|D3D10|Unknown)\w*|ID3DBlob)\b")


def parse():
    src = "".join(open(os.path.join(INC, h)).read() for h in HEADERS)
    out = {}
    for name, body in re.findall(r"typedef struct (\w+)Vtbl \{(.*?)\} \1Vtbl;", src, re.S):
        methods = []
        for m in re.finditer(r"([\w\s\*]+?)\s*\(STDMETHODCALLTYPE \*(\w+)\)\((.*?)\);", body, re.S):
            ret = " ".join(m.group(1).split())
            params = []
            for p in m.group(3).split(",")[1:]:  # drop `This`
                p = " ".join(p.split())
                arr = ""
                am = re.match(r"(.*?)(\[\d*\])$", p)
                if am:
                    p, arr = am.group(1).strip(), am.group(2)
                nm = re.match(r"(.*?)(\w+)$", p)
                ptype, pname = nm.group(1).strip(), nm.group(2)
                params.append((ptype, pname, arr))
            methods.append((ret, m.group(2), params))
        out[name] = methods
    return out


def iface_of(ptype):
    """Interface name if ptype is `[const] IFoo *`."""
    m = re.fullmatch(r"(?:const )?(I\w+) \*", ptype)
    if m and IFACE_RE.fullmatch(m.group(1)):
        return m.group(1)
    return None


def gen_method(iface, ret, name, params):
    fn = f"{iface}_{name}"
    if name in OVERRIDES:
        return OVERRIDES[name], None
    # Aggregate return in MSVC form: `T * (*M)(This, T *__ret, ...)`.
    agg = None
    if params and params[0][1] == "__ret":
        agg = params[0][0].rstrip("* ").strip()
        params = params[1:]
        ret = agg
    decl_params = ", ".join(["bridge_obj *This"] + [
        f"{'const wchar_t *' if t in WIDE_STRINGS else t} {n}{a}" for t, n, a in params])
    body = []
    body.append(f"    {iface} *inner = ({iface} *)This->inner;")
    body.append(f"    BRIDGE_TRACE(\"{iface}::{name}\");")
    call_args = ["inner"]
    post = []
    pre = []
    names = [n for _, n, _ in params]
    for i, (t, n, a) in enumerate(params):
        if t in WIDE_STRINGS:
            pre.append(f"    WCHAR *{n}_w = bridge_wstr({n});")
            post.append(f"    free({n}_w);")
            call_args.append(f"{n}_w")
            continue
        ifc = iface_of(t)
        if ifc and not a:
            call_args.append(f"({t})bridge_unwrap({n})")
            continue
        m = re.fullmatch(r"(I\w+) \*const \*", t)
        if m:
            # array of interface pointers; find its count parameter
            cands = [k for k, nn in enumerate(names)
                     if nn.endswith("count") or nn.startswith("num_") or nn.lower().startswith("num")]
            if not cands:
                raise SystemExit(f"no count for {iface}::{name}({n})")
            cnt = names[min(cands, key=lambda k: abs(k - i))]
            pre.append(f"    {m.group(1)} *{n}_u[({cnt}) ? ({cnt}) : 1];")
            pre.append(f"    for (UINT k_ = 0; k_ < (UINT)({cnt}); ++k_) {n}_u[k_] = ({m.group(1)} *)bridge_unwrap({n}[k_]);")
            call_args.append(f"{n} ? {n}_u : NULL")
            continue
        m = re.fullmatch(r"(I\w+) \*\*", t)
        if m and IFACE_RE.fullmatch(m.group(1)):
            fam = m.group(1)
            post.append(f"    if ({n} && *{n}) *{n} = ({fam} *)bridge_wrap_typed(*{n}, \"{fam}\");")
            call_args.append(n)
            continue
        if t == "void **" and i > 0 and params[i - 1][0] == "REFIID":
            riid = params[i - 1][1]
            post.append(f"    if (SUCCEEDED(hr_) && {n} && *{n}) *{n} = bridge_wrap(*{n}, {riid});")
            call_args.append(n)
            continue
        call_args.append(n)
    lines = [f"static {ret} {fn}({decl_params})", "{"] + body + pre
    call = f"inner->lpVtbl->{name}({', '.join(call_args[:1] + (['&ret_'] if agg else []) + call_args[1:])})"
    if agg:
        lines.append(f"    {agg} ret_;")
        lines.append(f"    memset(&ret_, 0, sizeof(ret_));")
        lines.append(f"    {call};")
        lines += post
        lines.append("    return ret_;")
    elif ret == "void":
        lines.append(f"    {call};")
        lines += post
    elif ret == "HRESULT":
        lines.append(f"    HRESULT hr_ = {call};")
        lines.append(f"    BRIDGE_TRACE_HR(\"{iface}::{name}\", hr_);")
        lines += post
        lines.append("    return hr_;")
    else:
        lines.append(f"    {ret} r_ = {call};")
        lines += post
        lines.append("    return r_;")
    lines.append("}")
    return fn, "\n".join(lines)


def main():
    ifaces = parse()
    out = ["/* Generated by gen_bridge.py from vkd3d's C vtable declarations. Do not edit. */",
           "#include \"bridge_internal.h\"", ""]
    protos, defs, vtbls = [], [], []
    FAMILIES = families(ifaces)
    for fam, (top, _) in FAMILIES.items():
        fam = top
        entries = []
        for ret, name, params in ifaces[fam]:
            fn, code = gen_method(fam, ret, name, params)
            if code:
                defs.append(code)
            else:
                protos.append(f"extern void {fn}(void);  /* hand-written in bridge.c */")
            entries.append(f"    (const void *){fn},  /* {name} */")
        vtbls.append(f"static const void *const {fam}_sysv_vtbl[] = {{\n" + "\n".join(entries) + "\n};")
    out += sorted(set(protos)) + [""] + defs + [""] + vtbls + [""]
    # family table: IID -> vtable
    out.append("const bridge_family bridge_families[] = {")
    for _, (fam, members) in FAMILIES.items():
        for mem in members:
            iid = "IID_ID3D10Blob" if mem == "ID3D10Blob" else f"IID_{mem}"
            out.append(f"    {{ &{iid}, \"{mem}\", \"{fam}\", {fam}_sysv_vtbl, "
                       f"sizeof({fam}_sysv_vtbl) / sizeof(void *) }},")
    out.append("    { NULL, NULL, NULL, NULL, 0 },")
    out.append("};")
    open(sys.argv[1], "w").write("\n".join(out) + "\n")
    n = sum(len(ifaces[t]) for t, _ in FAMILIES.values())
    print(f"gen_bridge: {len(FAMILIES)} families, {n} vtable slots, {len(defs)} generated thunks")


if __name__ == "__main__":
    main()
