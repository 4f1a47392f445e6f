/* Internal declarations of the System V <-> vkd3d (ms_abi) COM bridge. */
#ifndef DMLX_BRIDGE_INTERNAL_H
#define DMLX_BRIDGE_INTERNAL_H

/* vkd3d's headers declare the D3D12 entry points with ms_abi; we export
 * System V versions of the same names, so rename vkd3d's prototypes away. */
#define D3D12CreateDevice vkd3d_hdr_D3D12CreateDevice
#define D3D12CreateRootSignatureDeserializer vkd3d_hdr_D3D12CreateRootSignatureDeserializer
#define D3D12CreateVersionedRootSignatureDeserializer vkd3d_hdr_D3D12CreateVersionedRootSignatureDeserializer
#define D3D12GetDebugInterface vkd3d_hdr_D3D12GetDebugInterface
#define D3D12SerializeRootSignature vkd3d_hdr_D3D12SerializeRootSignature
#define D3D12SerializeVersionedRootSignature vkd3d_hdr_D3D12SerializeVersionedRootSignature
#define D3D12GetInterface vkd3d_hdr_D3D12GetInterface
#define D3D12EnableExperimentalFeatures vkd3d_hdr_D3D12EnableExperimentalFeatures

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <vkd3d_windows.h>
#include <vkd3d_d3d12.h>
#include <vkd3d_d3d12sdklayers.h>

#undef D3D12CreateDevice
#undef D3D12CreateRootSignatureDeserializer
#undef D3D12CreateVersionedRootSignatureDeserializer
#undef D3D12GetDebugInterface
#undef D3D12SerializeRootSignature
#undef D3D12SerializeVersionedRootSignature
#undef D3D12GetInterface
#undef D3D12EnableExperimentalFeatures

#define BRIDGE_MAGIC 0x4c4d445f42524447ull /* "GDRB_DML" */

typedef struct bridge_pdi bridge_pdi; /* private-data interfaces kept on our side */

/* A System V COM object wrapping one vkd3d object. `vtbl` must stay first. */
typedef struct bridge_obj {
    const void *const *vtbl;
    uint64_t magic;
    IUnknown *inner;
    const char *family;
    bridge_pdi *pdi;
    struct bridge_obj *next_in_bucket;
} bridge_obj;

typedef struct bridge_family {
    const IID *iid;
    const char *iface;
    const char *family;
    const void *const *vtbl;
    size_t slots;
} bridge_family;

extern const bridge_family bridge_families[];
extern int bridge_trace_level;

void *bridge_wrap(void *inner, REFIID riid);
void *bridge_wrap_typed(void *inner, const char *iface);
void *bridge_unwrap(const void *outer);
WCHAR *bridge_wstr(const wchar_t *s);
void bridge_trace(const char *what);
void bridge_trace_hr(const char *what, HRESULT hr);

#define BRIDGE_TRACE(what) do { if (bridge_trace_level >= 2) bridge_trace(what); } while (0)
#define BRIDGE_TRACE_HR(what, hr) do { if (bridge_trace_level >= 1 && FAILED(hr)) bridge_trace_hr(what, hr); } while (0)

#endif
