/* libd3d12.so for native Linux: System V COM objects (what libdirectml.so,
 * built against DirectX-Headers' WSL adapter, expects) forwarding to a
 * Direct3D 12 implementation over Vulkan: vkd3d-proton's native build (System
 * V calls, aggregates returned through an explicit pointer, 16-bit WCHAR) or
 * vkd3d's (ms_abi calls, explicit aggregate pointer, wchar_t).
 *
 * Generated thunks live in bridge_gen.c (gen_bridge.py); this file holds the
 * object map, the hand-written methods and the exported D3D12* functions.
 *
 * Environment:
 *   DMLX_BRIDGE_TRACE=0|1|2   0: quiet, 1 (default): failures, QueryInterface,
 *                             CheckFeatureSupport, pipeline creation; 2: every call
 *   DMLX_BRIDGE_DUMP_SHADERS=DIR  write every compute shader DirectML creates
 *   DMLX_VKD3D_PROTON_D3D12=path  vkd3d-proton's d3d12 library (default libvkd3d-proton-d3d12.so),
 *                             when built against vkd3d-proton's headers
 *   DMLX_VKD3D_UTILS=path     vkd3d-utils library (default libvkd3d-utils.so.1), when built
 *                             against vkd3d's headers
 */
#define INITGUID
#include "bridge_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int bridge_trace_level = 1;

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ tracing */

static void guid_str(const GUID *g, char *buf, size_t n)
{
    snprintf(buf, n, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", (unsigned)g->Data1, g->Data2, g->Data3,
             g->Data4[0], g->Data4[1], g->Data4[2], g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
}

/* IIDs DirectML may ask for that vkd3d 1.2's headers do not know. */
static const struct { const char *name; const char *guid; } extra_iids[] = {
    {"ID3D12Device2", "30baa41e-b15b-475c-a0bb-1af5c5b64328"},
    {"ID3D12Device3", "81dadc15-2bad-4392-93c5-101345c4aa98"},
    {"ID3D12Device4", "e865df17-a9ee-46f9-a463-3098315aa2e5"},
    {"ID3D12Device5", "8b4f173b-2fea-4b80-8f58-4307191ab95d"},
    {"ID3D12Device6", "c70b221b-40e4-4a17-89af-025a0727a6dc"},
    {"ID3D12Device7", "5c014b53-68a1-4b9b-8bd1-dd6046b9358b"},
    {"ID3D12Device8", "9218e6bb-f944-4f7e-a75c-b1b2c7b701f3"},
    {"ID3D12Device9", "4c80e962-f032-4f60-bc9e-ebc2cfa1d83c"},
    {"ID3D12Device10", "517f8718-aa66-49f9-b02b-a7ab89c06031"},
    {"ID3D12GraphicsCommandList3", "6fda83a7-b84c-4e38-9ac8-c7bd22016b3d"},
    {"ID3D12GraphicsCommandList4", "8754318e-d3a9-4541-98cf-645b50dc4874"},
    {"ID3D12GraphicsCommandList5", "55050859-4024-474c-87f5-6472eaee44ea"},
    {"ID3D12GraphicsCommandList6", "c3827890-e548-4cfa-96cf-5689a9370f80"},
    {"ID3D12InfoQueue", "0742a90b-c387-483f-b946-30a7e4e61458"},
    {"ID3D12InfoQueue1", "2852dd88-b484-4c0c-b6b1-67168500e600"},
    {"ID3D12DebugDevice", "3febd6dd-4973-4787-8194-e45f9e28923e"},
    {"ID3D12DebugCommandList", "09e0bf36-54ac-484f-8847-4baeeab6053f"},
    {"ID3D12Tools", "7071e1f0-e84b-4b33-974f-12fa49de65c5"},
    {"ID3D12DeviceRemovedExtendedData", "98931d33-5ae8-4791-aa3c-1a73a2934e71"},
    {"ID3D12CompatibilityDevice", "8f1c0e3c-fae3-4a82-b098-bfe1708207ff"},
    {"ID3D12Resource1", "9d5e227a-4430-4161-88b3-3eca6bb16e19"},
    {"ID3D12Resource2", "be36ec3b-ea85-4aeb-a45a-e9d76404a495"},
    {"ID3D12Fence1", "433685fe-e22b-4ca0-a8db-b5b4f4dd0e4a"},
    {"ID3D12Heap1", "572f7389-2168-49e3-9693-d6df5871bf6d"},
    {"ID3D12CommandQueue1", "3a3c3165-0ee7-4b8e-a0af-6356b4c3bbb9"},
    {"IDXGIDevice", "54ec77fa-1377-44e6-8c32-88fd5f44c84c"},
    {"IDXCoreAdapterFactory", "78ee5945-c36e-4b13-a669-005dd11c0f06"},
    {"IDXCoreAdapter", "f0db4c7f-fe5a-42a2-bd62-f2a6cf6fc83e"},
    {NULL, NULL},
};

static const char *iid_name(REFIID riid, char *buf, size_t n)
{
    char g[40];
    for (const bridge_family *f = bridge_families; f->iid; ++f)
        if (!memcmp(f->iid, riid, sizeof(GUID)))
            return f->iface;
    if (!memcmp(&IID_IUnknown, riid, sizeof(GUID))) return "IUnknown";
    if (!memcmp(&IID_ID3D12Object, riid, sizeof(GUID))) return "ID3D12Object";
    if (!memcmp(&IID_ID3D12DeviceChild, riid, sizeof(GUID))) return "ID3D12DeviceChild";
    if (!memcmp(&IID_ID3D12Pageable, riid, sizeof(GUID))) return "ID3D12Pageable";
    guid_str(riid, g, sizeof(g));
    for (int i = 0; extra_iids[i].name; ++i)
        if (!strcmp(extra_iids[i].guid, g)) {
            snprintf(buf, n, "%s {%s}", extra_iids[i].name, g);
            return buf;
        }
    snprintf(buf, n, "{%s}", g);
    return buf;
}

void bridge_trace(const char *what) { fprintf(stderr, "[d3d12-bridge] %s\n", what); }

void bridge_trace_hr(const char *what, HRESULT hr)
{
    fprintf(stderr, "[d3d12-bridge] %s FAILED hr=0x%08x\n", what, (unsigned)hr);
}

__attribute__((constructor)) static void bridge_init(void)
{
    const char *t = getenv("DMLX_BRIDGE_TRACE");
    if (t) bridge_trace_level = atoi(t);
}

/* --------------------------------------------------------------- object map */

#define NBUCKETS 4096
static bridge_obj *buckets[NBUCKETS];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

/* inner vkd3d vtable -> family, learnt from objects wrapped with a known IID */
static struct { const void *inner_vtbl; const bridge_family *fam; } learnt[64];

static size_t bucket_of(const void *p) { return ((uintptr_t)p >> 4) % NBUCKETS; }

static const bridge_family *family_by_iid(REFIID riid)
{
    for (const bridge_family *f = bridge_families; f->iid; ++f)
        if (!memcmp(f->iid, riid, sizeof(GUID)))
            return f;
    return NULL;
}

static const bridge_family *family_by_iface(const char *iface)
{
    if (!strcmp(iface, "ID3DBlob")) iface = "ID3D10Blob";
    for (const bridge_family *f = bridge_families; f->iid; ++f)
        if (!strcmp(f->iface, iface))
            return f;
    return NULL;
}

static void *wrap_with(void *inner, const bridge_family *fam, const char *why)
{
    if (!inner) return NULL;
    pthread_mutex_lock(&map_lock);
    size_t b = bucket_of(inner);
    for (bridge_obj *o = buckets[b]; o; o = o->next_in_bucket)
        if (o->inner == inner) {
            pthread_mutex_unlock(&map_lock);
            return o;
        }
    const void *ivt = *(const void *const *)inner;
    if (fam) {
        size_t i;
        for (i = 0; i < 64 && learnt[i].inner_vtbl && learnt[i].inner_vtbl != ivt; ++i) {}
        if (i < 64 && !learnt[i].inner_vtbl) { learnt[i].inner_vtbl = ivt; learnt[i].fam = fam; }
    } else {
        for (size_t i = 0; i < 64 && learnt[i].inner_vtbl; ++i)
            if (learnt[i].inner_vtbl == ivt) { fam = learnt[i].fam; break; }
        if (!fam) {
            fam = family_by_iface("IUnknown");
            fprintf(stderr, "[d3d12-bridge] WARNING: wrapping %p (%s) as plain IUnknown\n", inner, why);
        }
    }
    bridge_obj *o = calloc(1, sizeof(*o));
    o->vtbl = fam->vtbl;
    o->magic = BRIDGE_MAGIC;
    o->inner = inner;
    o->family = fam->family;
    o->next_in_bucket = buckets[b];
    buckets[b] = o;
    pthread_mutex_unlock(&map_lock);
    if (bridge_trace_level >= 2)
        fprintf(stderr, "[d3d12-bridge] wrap %p -> %p as %s (%s)\n", inner, (void *)o, fam->family, why);
    return o;
}

void *bridge_wrap(void *inner, REFIID riid)
{
    char buf[96];
    return wrap_with(inner, family_by_iid(riid), iid_name(riid, buf, sizeof(buf)));
}

void *bridge_wrap_typed(void *inner, const char *iface) { return wrap_with(inner, family_by_iface(iface), iface); }

void *bridge_unwrap(const void *outer)
{
    if (!outer) return NULL;
    const bridge_obj *o = outer;
    if (o->magic == BRIDGE_MAGIC) return o->inner;
    fprintf(stderr, "[d3d12-bridge] WARNING: foreign object %p passed to vkd3d\n", outer);
    return (void *)outer;
}

/* DirectML was built with wchar_t strings (32-bit on Linux); vkd3d-proton's
 * WCHAR is 16-bit (vkd3d's is wchar_t). Names are ASCII in practice: code
 * points outside the BMP become '?'. The copy is freed by the caller. */
WCHAR *bridge_wstr(const wchar_t *s)
{
    if (!s) return NULL;
    size_t n = wcslen(s);
    WCHAR *w = malloc((n + 1) * sizeof(WCHAR));
    if (!w) return NULL;
    for (size_t i = 0; i <= n; ++i)
        w[i] = (sizeof(WCHAR) < sizeof(wchar_t) && (uint32_t)s[i] > 0xffff) ? (WCHAR)'?' : (WCHAR)s[i];
    return w;
}

/* ---------------------------------------------- private-data interfaces */

struct bridge_pdi {
    GUID guid;
    void *unk; /* System V IUnknown owned by the caller's side */
    bridge_pdi *next;
};

typedef ULONG (*sysv_refcount_fn)(void *);
static ULONG sysv_addref(void *u) { return ((sysv_refcount_fn *)*(void **)u)[1](u); }
static ULONG sysv_release(void *u) { return ((sysv_refcount_fn *)*(void **)u)[2](u); }

static void remove_pdi(bridge_obj *o, REFGUID guid)
{
    for (bridge_pdi **p = &o->pdi; *p; p = &(*p)->next)
        if (!memcmp(&(*p)->guid, guid, sizeof(GUID))) {
            bridge_pdi *d = *p;
            *p = d->next;
            if (d->unk) sysv_release(d->unk);
            free(d);
            return;
        }
}

HRESULT bridge_SetPrivateDataInterface(bridge_obj *This, REFGUID guid, const IUnknown *data)
{
    BRIDGE_TRACE("SetPrivateDataInterface");
    pthread_mutex_lock(&map_lock);
    remove_pdi(This, guid);
    if (data) {
        bridge_pdi *d = calloc(1, sizeof(*d));
        d->guid = *guid;
        d->unk = (void *)data;
        sysv_addref(d->unk);
        d->next = This->pdi;
        This->pdi = d;
    }
    pthread_mutex_unlock(&map_lock);
    return S_OK;
}

HRESULT bridge_GetPrivateData(bridge_obj *This, REFGUID guid, UINT *size, void *data)
{
    BRIDGE_TRACE("GetPrivateData");
    pthread_mutex_lock(&map_lock);
    for (bridge_pdi *d = This->pdi; d; d = d->next)
        if (!memcmp(&d->guid, guid, sizeof(GUID))) {
            HRESULT hr = S_OK;
            if (!data) *size = sizeof(void *);
            else if (*size < sizeof(void *)) hr = E_INVALIDARG;
            else { *(void **)data = d->unk; sysv_addref(d->unk); *size = sizeof(void *); }
            pthread_mutex_unlock(&map_lock);
            return hr;
        }
    pthread_mutex_unlock(&map_lock);
    ID3D12Object *inner = (ID3D12Object *)This->inner;
    return inner->lpVtbl->GetPrivateData(inner, guid, size, data);
}

/* ------------------------------------------------------------ IUnknown */

HRESULT bridge_QueryInterface(bridge_obj *This, REFIID riid, void **out)
{
    char buf[96];
    IUnknown *inner = This->inner;
    HRESULT hr = inner->lpVtbl->QueryInterface(inner, riid, out);
    int base = !memcmp(&IID_IUnknown, riid, sizeof(GUID)) || !memcmp(&IID_ID3D12Object, riid, sizeof(GUID))
               || !memcmp(&IID_ID3D12DeviceChild, riid, sizeof(GUID)) || !memcmp(&IID_ID3D12Pageable, riid, sizeof(GUID));
    int refused = 0;
    if (SUCCEEDED(hr) && out && *out && !base && !family_by_iid(riid)) {
        /* vkd3d has it but the bridge has no vtable for it: refuse, or the
         * caller would call past the end of our System V vtable. */
        ((IUnknown *)*out)->lpVtbl->Release(*out);
        *out = NULL;
        hr = E_NOINTERFACE;
        refused = 1;
    }
    if (bridge_trace_level >= 1)
        fprintf(stderr, "[d3d12-bridge] %s::QueryInterface(%s) -> 0x%08x%s\n", This->family,
                iid_name(riid, buf, sizeof(buf)), (unsigned)hr, refused ? " (vkd3d has it; not bridged)" : "");
    if (SUCCEEDED(hr) && out && *out) *out = bridge_wrap(*out, riid);
    return hr;
}

ULONG bridge_AddRef(bridge_obj *This)
{
    BRIDGE_TRACE("AddRef");
    return This->inner->lpVtbl->AddRef(This->inner);
}

ULONG bridge_Release(bridge_obj *This)
{
    BRIDGE_TRACE("Release");
    ULONG r = This->inner->lpVtbl->Release(This->inner);
    if (r == 0) {
        pthread_mutex_lock(&map_lock);
        size_t b = bucket_of(This->inner);
        for (bridge_obj **p = &buckets[b]; *p; p = &(*p)->next_in_bucket)
            if (*p == This) { *p = This->next_in_bucket; break; }
        while (This->pdi) remove_pdi(This, &This->pdi->guid);
        pthread_mutex_unlock(&map_lock);
        This->magic = 0;
        free(This);
    }
    return r;
}

/* ------------------------------------------------- structs with interfaces */

void bridge_ResourceBarrier(bridge_obj *This, UINT count, const D3D12_RESOURCE_BARRIER *barriers)
{
    BRIDGE_TRACE("ResourceBarrier");
    ID3D12GraphicsCommandList *inner = (ID3D12GraphicsCommandList *)This->inner;
    D3D12_RESOURCE_BARRIER local[count ? count : 1];
    for (UINT i = 0; i < count; ++i) {
        local[i] = barriers[i];
        switch (local[i].Type) {
        case D3D12_RESOURCE_BARRIER_TYPE_TRANSITION:
            local[i].Transition.pResource = bridge_unwrap(local[i].Transition.pResource);
            break;
        case D3D12_RESOURCE_BARRIER_TYPE_ALIASING:
            local[i].Aliasing.pResourceBefore = bridge_unwrap(local[i].Aliasing.pResourceBefore);
            local[i].Aliasing.pResourceAfter = bridge_unwrap(local[i].Aliasing.pResourceAfter);
            break;
        case D3D12_RESOURCE_BARRIER_TYPE_UAV:
            local[i].UAV.pResource = bridge_unwrap(local[i].UAV.pResource);
            break;
        }
    }
    inner->lpVtbl->ResourceBarrier(inner, count, count ? local : NULL);
}

void bridge_CopyTextureRegion(bridge_obj *This, const D3D12_TEXTURE_COPY_LOCATION *dst, UINT x, UINT y, UINT z,
                              const D3D12_TEXTURE_COPY_LOCATION *src, const D3D12_BOX *box)
{
    BRIDGE_TRACE("CopyTextureRegion");
    ID3D12GraphicsCommandList *inner = (ID3D12GraphicsCommandList *)This->inner;
    D3D12_TEXTURE_COPY_LOCATION d = *dst, s = *src;
    d.pResource = bridge_unwrap(d.pResource);
    s.pResource = bridge_unwrap(s.pResource);
    inner->lpVtbl->CopyTextureRegion(inner, &d, x, y, z, &s, box);
}

/* Describe a DXBC container: chunk list and shader model of the program. */
static void describe_bytecode(const void *code, SIZE_T len, char *out, size_t n)
{
    const unsigned char *p = code;
    size_t used = 0;
    out[0] = 0;
    if (!code || len < 32 || memcmp(p, "DXBC", 4)) {
        snprintf(out, n, "%zu bytes, not a DXBC container", (size_t)len);
        return;
    }
    uint32_t count;
    memcpy(&count, p + 28, 4);
    used += snprintf(out + used, n - used, "%zu bytes, chunks:", (size_t)len);
    for (uint32_t i = 0; i < count && 32 + 4 * i + 4 <= len && used < n; ++i) {
        uint32_t off;
        memcpy(&off, p + 32 + 4 * i, 4);
        if (off + 8 > len) break;
        const unsigned char *c = p + off;
        used += snprintf(out + used, n - used, " %.4s", (const char *)c);
        uint32_t ver;
        if ((!memcmp(c, "SHEX", 4) || !memcmp(c, "SHDR", 4) || !memcmp(c, "DXIL", 4)) && off + 12 <= len) {
            memcpy(&ver, c + 8, 4);
            used += snprintf(out + used, n - used, "(cs_%u_%u)", (ver >> 4) & 0xf, ver & 0xf);
        }
    }
}

static void dump_shader(const void *code, SIZE_T len)
{
    static int counter;
    const char *dir = getenv("DMLX_BRIDGE_DUMP_SHADERS");
    if (!dir || !code) return;
    char path[512];
    snprintf(path, sizeof(path), "%s/cs_%04d.dxbc", dir, __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST));
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(code, 1, len, f); fclose(f); }
}

HRESULT bridge_CreateComputePipelineState(bridge_obj *This, const D3D12_COMPUTE_PIPELINE_STATE_DESC *desc,
                                          REFIID riid, void **out)
{
    ID3D12Device *inner = (ID3D12Device *)This->inner;
    D3D12_COMPUTE_PIPELINE_STATE_DESC d = *desc;
    d.pRootSignature = bridge_unwrap(d.pRootSignature);
    HRESULT hr = inner->lpVtbl->CreateComputePipelineState(inner, &d, riid, out);
    dump_shader(d.CS.pShaderBytecode, d.CS.BytecodeLength);
    if (bridge_trace_level >= 1 && (FAILED(hr) || bridge_trace_level >= 2)) {
        char info[512];
        describe_bytecode(d.CS.pShaderBytecode, d.CS.BytecodeLength, info, sizeof(info));
        fprintf(stderr, "[d3d12-bridge] CreateComputePipelineState(%s) -> 0x%08x\n", info, (unsigned)hr);
    }
    if (SUCCEEDED(hr) && out && *out) *out = bridge_wrap(*out, riid);
    return hr;
}

HRESULT bridge_CreateGraphicsPipelineState(bridge_obj *This, const D3D12_GRAPHICS_PIPELINE_STATE_DESC *desc,
                                           REFIID riid, void **out)
{
    ID3D12Device *inner = (ID3D12Device *)This->inner;
    D3D12_GRAPHICS_PIPELINE_STATE_DESC d = *desc;
    d.pRootSignature = bridge_unwrap(d.pRootSignature);
    HRESULT hr = inner->lpVtbl->CreateGraphicsPipelineState(inner, &d, riid, out);
    BRIDGE_TRACE_HR("CreateGraphicsPipelineState", hr);
    if (SUCCEEDED(hr) && out && *out) *out = bridge_wrap(*out, riid);
    return hr;
}

HRESULT bridge_CheckFeatureSupport(bridge_obj *This, D3D12_FEATURE feature, void *data, UINT size)
{
    ID3D12Device *inner = (ID3D12Device *)This->inner;
    D3D12_FEATURE_DATA_SHADER_MODEL sm_in = {0};
    if (feature == D3D12_FEATURE_SHADER_MODEL && data && size >= sizeof(sm_in)) sm_in = *(D3D12_FEATURE_DATA_SHADER_MODEL *)data;
    HRESULT hr = inner->lpVtbl->CheckFeatureSupport(inner, feature, data, size);
    if (bridge_trace_level >= 1) {
        fprintf(stderr, "[d3d12-bridge] CheckFeatureSupport(feature=%d, size=%u) -> 0x%08x", (int)feature, size, (unsigned)hr);
        if (feature == D3D12_FEATURE_SHADER_MODEL && SUCCEEDED(hr))
            fprintf(stderr, " [asked 0x%x, got 0x%x]", (unsigned)sm_in.HighestShaderModel,
                    (unsigned)((D3D12_FEATURE_DATA_SHADER_MODEL *)data)->HighestShaderModel);
        if (feature == D3D12_FEATURE_D3D12_OPTIONS1 && SUCCEEDED(hr)) {
            D3D12_FEATURE_DATA_D3D12_OPTIONS1 *o = data;
            fprintf(stderr, " [WaveOps=%d lanes=%u..%u]", o->WaveOps, o->WaveLaneCountMin, o->WaveLaneCountMax);
        }
        fprintf(stderr, "\n");
    }
    return hr;
}

/* -------------------------------------------------------- exported API */

/* The Direct3D 12 implementation behind the bridge. vkd3d-proton's native
 * build exports the D3D12* functions themselves (System V); vkd3d exports
 * them (ms_abi) from vkd3d-utils, and its device entry point takes an API
 * version. The __stdcall in these types follows the implementation's headers. */
#ifdef DMLX_VKD3D_PROTON
#define IMPL_ENV "DMLX_VKD3D_PROTON_D3D12"
#define IMPL_DEFAULT "libvkd3d-proton-d3d12.so"
#define IMPL_CREATE_DEVICE "D3D12CreateDevice"
typedef HRESULT(__stdcall *PFN_create_device)(IUnknown *, D3D_FEATURE_LEVEL, REFIID, void **);
#define CREATE_DEVICE(fn, level, riid, out) (fn)(NULL, level, riid, out)
#else
#define IMPL_ENV "DMLX_VKD3D_UTILS"
#define IMPL_DEFAULT "libvkd3d-utils.so.1"
#define IMPL_CREATE_DEVICE "D3D12CreateDeviceVKD3D"
enum { BRIDGE_VKD3D_API_VERSION_1_0 = 0 }; /* enum vkd3d_api_version (vkd3d.h) */
typedef HRESULT(__stdcall *PFN_create_device)(IUnknown *, D3D_FEATURE_LEVEL, REFIID, void **, int);
#define CREATE_DEVICE(fn, level, riid, out) (fn)(NULL, level, riid, out, BRIDGE_VKD3D_API_VERSION_1_0)
#endif
typedef HRESULT(__stdcall *PFN_serialize_v)(const D3D12_VERSIONED_ROOT_SIGNATURE_DESC *, ID3DBlob **, ID3DBlob **);
typedef HRESULT(__stdcall *PFN_serialize)(const D3D12_ROOT_SIGNATURE_DESC *, D3D_ROOT_SIGNATURE_VERSION, ID3DBlob **, ID3DBlob **);
typedef HRESULT(__stdcall *PFN_deser)(const void *, SIZE_T, REFIID, void **);

/* dlopen'd RTLD_LOCAL and looked up by handle, so our own exports of the
 * same names are never hit. */
static void *impl_sym(const char *name)
{
    static void *h;
    const char *lib = getenv(IMPL_ENV) ? getenv(IMPL_ENV) : IMPL_DEFAULT;
    if (!h) {
        h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "[d3d12-bridge] cannot load the D3D12 implementation (%s): %s\n", IMPL_ENV, dlerror());
            return NULL;
        }
    }
    void *s = dlsym(h, name);
    if (!s) fprintf(stderr, "[d3d12-bridge] %s lacks %s\n", lib, name);
    return s;
}

static LUID last_luid;

EXPORT HRESULT D3D12CreateDevice(IUnknown *adapter, D3D_FEATURE_LEVEL level, REFIID riid, void **out)
{
    PFN_create_device fn = (PFN_create_device)impl_sym(IMPL_CREATE_DEVICE);
    if (!fn) return E_FAIL;
    if (adapter) fprintf(stderr, "[d3d12-bridge] D3D12CreateDevice: ignoring adapter %p (vkd3d picks the Vulkan device)\n", (void *)adapter);
    HRESULT hr = CREATE_DEVICE(fn, level, riid, out);
    if (bridge_trace_level >= 1)
        fprintf(stderr, "[d3d12-bridge] D3D12CreateDevice(feature level 0x%x) -> 0x%08x\n", (unsigned)level, (unsigned)hr);
    if (SUCCEEDED(hr) && out && *out) {
        ID3D12Device *dev = NULL;
        if (SUCCEEDED(((IUnknown *)*out)->lpVtbl->QueryInterface(*out, &IID_ID3D12Device, (void **)&dev))) {
            dev->lpVtbl->GetAdapterLuid(dev, &last_luid);
            dev->lpVtbl->Release(dev);
        }
        *out = bridge_wrap(*out, riid);
    }
    return hr;
}

/* The adapter LUID of the last device created; libdxcore.so (our stand-in)
 * reports it as its single adapter's InstanceLuid. */
EXPORT LUID dmlx_bridge_adapter_luid(void) { return last_luid; }

EXPORT HRESULT D3D12SerializeVersionedRootSignature(const D3D12_VERSIONED_ROOT_SIGNATURE_DESC *desc, ID3DBlob **blob,
                                                    ID3DBlob **error_blob)
{
    PFN_serialize_v fn = (PFN_serialize_v)impl_sym("D3D12SerializeVersionedRootSignature");
    if (!fn) return E_FAIL;
    HRESULT hr = fn(desc, blob, error_blob);
    if (bridge_trace_level >= 2 || FAILED(hr))
        fprintf(stderr, "[d3d12-bridge] D3D12SerializeVersionedRootSignature(version %d) -> 0x%08x\n",
                desc ? (int)desc->Version : -1, (unsigned)hr);
    if (blob && *blob) *blob = bridge_wrap_typed(*blob, "ID3D10Blob");
    if (error_blob && *error_blob) *error_blob = bridge_wrap_typed(*error_blob, "ID3D10Blob");
    return hr;
}

EXPORT HRESULT D3D12SerializeRootSignature(const D3D12_ROOT_SIGNATURE_DESC *desc, D3D_ROOT_SIGNATURE_VERSION version,
                                           ID3DBlob **blob, ID3DBlob **error_blob)
{
    PFN_serialize fn = (PFN_serialize)impl_sym("D3D12SerializeRootSignature");
    if (!fn) return E_FAIL;
    HRESULT hr = fn(desc, version, blob, error_blob);
    BRIDGE_TRACE_HR("D3D12SerializeRootSignature", hr);
    if (blob && *blob) *blob = bridge_wrap_typed(*blob, "ID3D10Blob");
    if (error_blob && *error_blob) *error_blob = bridge_wrap_typed(*error_blob, "ID3D10Blob");
    return hr;
}

EXPORT HRESULT D3D12CreateRootSignatureDeserializer(const void *data, SIZE_T size, REFIID riid, void **out)
{
    PFN_deser fn = (PFN_deser)impl_sym("D3D12CreateRootSignatureDeserializer");
    if (!fn) return E_FAIL;
    HRESULT hr = fn(data, size, riid, out);
    if (SUCCEEDED(hr) && out && *out) *out = bridge_wrap(*out, riid);
    return hr;
}

EXPORT HRESULT D3D12CreateVersionedRootSignatureDeserializer(const void *data, SIZE_T size, REFIID riid, void **out)
{
    PFN_deser fn = (PFN_deser)impl_sym("D3D12CreateVersionedRootSignatureDeserializer");
    if (!fn) return E_FAIL;
    HRESULT hr = fn(data, size, riid, out);
    if (SUCCEEDED(hr) && out && *out) *out = bridge_wrap(*out, riid);
    return hr;
}

EXPORT HRESULT D3D12GetDebugInterface(REFIID riid, void **out)
{
    char buf[96];
    if (bridge_trace_level >= 1)
        fprintf(stderr, "[d3d12-bridge] D3D12GetDebugInterface(%s) -> E_NOINTERFACE\n", iid_name(riid, buf, sizeof(buf)));
    if (out) *out = NULL;
    return E_NOINTERFACE;
}

EXPORT HRESULT D3D12EnableExperimentalFeatures(UINT n, const IID *iids, void *structs, UINT *sizes)
{
    (void)n; (void)iids; (void)structs; (void)sizes;
    return E_NOINTERFACE;
}

EXPORT HRESULT D3D12GetInterface(REFIID clsid, REFIID riid, void **out)
{
    (void)clsid; (void)riid;
    if (out) *out = NULL;
    return E_NOINTERFACE;
}
