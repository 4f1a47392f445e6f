// libdxcore.so stand-in for native Linux (issue 6).
//
// libdirectml.so (WSL build) NEEDs libdxcore.so and, in DMLCreateDevice,
// dlsym()s DXCoreCreateAdapterFactory and looks the D3D12 device's adapter up
// by LUID; without an adapter factory DMLCreateDevice fails with E_FAIL. Native
// Linux has no DXCore (no /dev/dxg), so this library describes one adapter,
// "the Vulkan device vkd3d picked", with properties from environment variables:
//   DMLX_DXCORE_VENDOR_ID / DMLX_DXCORE_DEVICE_ID (hex or decimal; default 0 = unknown vendor)
//   DMLX_DXCORE_MEMORY_MB (dedicated memory; default 4096), DMLX_DXCORE_INTEGRATED=1
//   DMLX_BRIDGE_TRACE=0|1|2 (1: log every call, default)
// It is written against DirectX-Headers' dxcore_interface.h (System V COM).
#include <wsl/winadapter.h>
#include <directx/dxcore_interface.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int trace_level() {
    static int t = [] {
        const char* e = std::getenv("DMLX_BRIDGE_TRACE");
        return e ? std::atoi(e) : 1;
    }();
    return t;
}

#define TRACE(...)                                     \
    do {                                               \
        if (trace_level() >= 1) {                      \
            std::fprintf(stderr, "[dxcore-stub] " __VA_ARGS__); \
            std::fputc('\n', stderr);                  \
        }                                              \
    } while (0)

uint64_t env_u64(const char* name, uint64_t def) {
    const char* e = std::getenv(name);
    return e && *e ? std::strtoull(e, nullptr, 0) : def;
}

bool same(REFIID a, const GUID& b) { return std::memcmp(&a, &b, sizeof(GUID)) == 0; }

const GUID kIUnknown = {0x00000000, 0x0000, 0x0000, {0xc0, 0, 0, 0, 0, 0, 0, 0x46}};
const GUID kFactory = {0x78ee5945, 0xc36e, 0x4b13, {0xa6, 0x69, 0x00, 0x5d, 0xd1, 0x1c, 0x0f, 0x06}};
const GUID kList = {0x526c7776, 0x40e9, 0x459b, {0xb7, 0x11, 0xf3, 0x2a, 0xd7, 0x6d, 0xfc, 0x28}};
const GUID kAdapter = {0xf0db4c7f, 0xfe5a, 0x42a2, {0xbd, 0x62, 0xf2, 0xa6, 0xcf, 0x6f, 0xc8, 0x3e}};

LUID adapter_luid() {
    LUID l = {};
    // the bridge remembers vkd3d's adapter LUID from D3D12CreateDevice
    using fn_t = LUID (*)();
    if (auto fn = (fn_t)dlsym(RTLD_DEFAULT, "dmlx_bridge_adapter_luid")) l = fn();
    return l;
}

struct Factory;
Factory* the_factory();

struct Adapter final : IDXCoreAdapter {
    LUID luid = {};
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
        if (same(riid, kIUnknown) || same(riid, kAdapter)) { *ppv = this; return S_OK; }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() override { return 2; }
    ULONG STDMETHODCALLTYPE Release() override { return 1; }
    bool STDMETHODCALLTYPE IsValid() override { TRACE("Adapter::IsValid -> true"); return true; }
    bool STDMETHODCALLTYPE IsAttributeSupported(REFGUID g) override {
        TRACE("Adapter::IsAttributeSupported({%08x-...}) -> true", (unsigned)g.Data1);
        return true;  // D3D11_GRAPHICS, D3D12_GRAPHICS, D3D12_CORE_COMPUTE
    }
    bool STDMETHODCALLTYPE IsPropertySupported(DXCoreAdapterProperty p) override {
        size_t s;
        bool ok = size_of(p, &s);
        TRACE("Adapter::IsPropertySupported(%u) -> %d", (unsigned)p, ok);
        return ok;
    }
    static bool size_of(DXCoreAdapterProperty p, size_t* s) {
        switch (p) {
        case DXCoreAdapterProperty::InstanceLuid: *s = sizeof(LUID); return true;
        case DXCoreAdapterProperty::DriverVersion: *s = 8; return true;
        case DXCoreAdapterProperty::DriverDescription: *s = std::strlen(description()) + 1; return true;
        case DXCoreAdapterProperty::HardwareID: *s = sizeof(DXCoreHardwareID); return true;
        case DXCoreAdapterProperty::HardwareIDParts: *s = sizeof(DXCoreHardwareIDParts); return true;
        case DXCoreAdapterProperty::KmdModelVersion: *s = 4; return true;
        case DXCoreAdapterProperty::ComputePreemptionGranularity:
        case DXCoreAdapterProperty::GraphicsPreemptionGranularity: *s = 2; return true;
        case DXCoreAdapterProperty::DedicatedAdapterMemory:
        case DXCoreAdapterProperty::DedicatedSystemMemory:
        case DXCoreAdapterProperty::SharedSystemMemory: *s = 8; return true;
        case DXCoreAdapterProperty::AcgCompatible:
        case DXCoreAdapterProperty::IsHardware:
        case DXCoreAdapterProperty::IsIntegrated:
        case DXCoreAdapterProperty::IsDetachable: *s = 1; return true;
        }
        return false;
    }
    static const char* description() {
        const char* d = std::getenv("DMLX_DXCORE_DESCRIPTION");
        return d ? d : "vkd3d Direct3D 12 on Vulkan (dmlx bridge)";
    }
    HRESULT STDMETHODCALLTYPE GetProperty(DXCoreAdapterProperty p, size_t size, void* out) override {
        size_t need;
        if (!size_of(p, &need)) { TRACE("Adapter::GetProperty(%u) -> not supported", (unsigned)p); return E_NOTIMPL; }
        if (!out || size < need) return E_INVALIDARG;
        std::memset(out, 0, need);
        uint32_t vendor = (uint32_t)env_u64("DMLX_DXCORE_VENDOR_ID", 0), device = (uint32_t)env_u64("DMLX_DXCORE_DEVICE_ID", 0);
        uint64_t mem = env_u64("DMLX_DXCORE_MEMORY_MB", 4096) << 20;
        switch (p) {
        case DXCoreAdapterProperty::InstanceLuid: {
            LUID l = adapter_luid();
            std::memcpy(out, &l, sizeof(l));
            break;
        }
        case DXCoreAdapterProperty::DriverVersion: {
            uint64_t v = env_u64("DMLX_DXCORE_DRIVER_VERSION", 0x001F00000000270Full);  // 31.0.0.9999
            std::memcpy(out, &v, 8);
            break;
        }
        case DXCoreAdapterProperty::DriverDescription: std::memcpy(out, description(), need); break;
        case DXCoreAdapterProperty::HardwareID: {
            DXCoreHardwareID h = {vendor, device, 0, 0};
            std::memcpy(out, &h, sizeof(h));
            break;
        }
        case DXCoreAdapterProperty::HardwareIDParts: {
            DXCoreHardwareIDParts h = {vendor, device, 0, 0, 0};
            std::memcpy(out, &h, sizeof(h));
            break;
        }
        case DXCoreAdapterProperty::KmdModelVersion: { uint32_t v = 3000; std::memcpy(out, &v, 4); break; }  // WDDM 3.0
        case DXCoreAdapterProperty::DedicatedAdapterMemory: std::memcpy(out, &mem, 8); break;
        case DXCoreAdapterProperty::IsHardware: *(bool*)out = true; break;
        case DXCoreAdapterProperty::IsIntegrated: *(bool*)out = env_u64("DMLX_DXCORE_INTEGRATED", 0) != 0; break;
        default: break;
        }
        TRACE("Adapter::GetProperty(%u, %zu) -> S_OK", (unsigned)p, size);
        return S_OK;
    }
    HRESULT STDMETHODCALLTYPE GetPropertySize(DXCoreAdapterProperty p, size_t* s) override {
        bool ok = size_of(p, s);
        TRACE("Adapter::GetPropertySize(%u) -> %s", (unsigned)p, ok ? "S_OK" : "E_NOTIMPL");
        return ok ? S_OK : E_NOTIMPL;
    }
    bool STDMETHODCALLTYPE IsQueryStateSupported(DXCoreAdapterState s) override {
        TRACE("Adapter::IsQueryStateSupported(%u) -> true", (unsigned)s);
        return true;
    }
    HRESULT STDMETHODCALLTYPE QueryState(DXCoreAdapterState s, size_t, const void*, size_t outSize, void* out) override {
        TRACE("Adapter::QueryState(%u)", (unsigned)s);
        if (s == DXCoreAdapterState::AdapterMemoryBudget && outSize >= sizeof(DXCoreAdapterMemoryBudget)) {
            DXCoreAdapterMemoryBudget b = {};
            b.budget = env_u64("DMLX_DXCORE_MEMORY_MB", 4096) << 20;
            b.availableForReservation = b.budget / 2;
            std::memcpy(out, &b, sizeof(b));
            return S_OK;
        }
        if (s == DXCoreAdapterState::IsDriverUpdateInProgress && outSize >= 1) { *(bool*)out = false; return S_OK; }
        return E_NOTIMPL;
    }
    bool STDMETHODCALLTYPE IsSetStateSupported(DXCoreAdapterState) override { return false; }
    HRESULT STDMETHODCALLTYPE SetState(DXCoreAdapterState, size_t, const void*, size_t, const void*) override { return E_NOTIMPL; }
    HRESULT STDMETHODCALLTYPE GetFactory(REFIID riid, void** ppv) override;
};

Adapter g_adapter;

struct List final : IDXCoreAdapterList {
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
        if (same(riid, kIUnknown) || same(riid, kList)) { *ppv = this; return S_OK; }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() override { return 2; }
    ULONG STDMETHODCALLTYPE Release() override { return 1; }
    HRESULT STDMETHODCALLTYPE GetAdapter(uint32_t i, REFIID riid, void** ppv) override {
        TRACE("AdapterList::GetAdapter(%u)", i);
        if (i != 0) { *ppv = nullptr; return E_INVALIDARG; }
        return g_adapter.QueryInterface(riid, ppv);
    }
    uint32_t STDMETHODCALLTYPE GetAdapterCount() override { TRACE("AdapterList::GetAdapterCount -> 1"); return 1; }
    bool STDMETHODCALLTYPE IsStale() override { return false; }
    HRESULT STDMETHODCALLTYPE GetFactory(REFIID riid, void** ppv) override;
    HRESULT STDMETHODCALLTYPE Sort(uint32_t, const DXCoreAdapterPreference*) override { return S_OK; }
    bool STDMETHODCALLTYPE IsAdapterPreferenceSupported(DXCoreAdapterPreference) override { return true; }
};

List g_list;

struct Factory final : IDXCoreAdapterFactory {
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
        if (same(riid, kIUnknown) || same(riid, kFactory)) { *ppv = this; return S_OK; }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() override { return 2; }
    ULONG STDMETHODCALLTYPE Release() override { return 1; }
    HRESULT STDMETHODCALLTYPE CreateAdapterList(uint32_t n, const GUID* attrs, REFIID riid, void** ppv) override {
        TRACE("Factory::CreateAdapterList(%u attributes, first {%08x-...})", n, n ? (unsigned)attrs[0].Data1 : 0u);
        return g_list.QueryInterface(riid, ppv);
    }
    HRESULT STDMETHODCALLTYPE GetAdapterByLuid(const LUID& l, REFIID riid, void** ppv) override {
        LUID mine = adapter_luid();
        TRACE("Factory::GetAdapterByLuid(%08x:%08x; device LUID %08x:%08x)", (unsigned)l.HighPart, (unsigned)l.LowPart,
              (unsigned)mine.HighPart, (unsigned)mine.LowPart);
        return g_adapter.QueryInterface(riid, ppv);
    }
    bool STDMETHODCALLTYPE IsNotificationTypeSupported(DXCoreNotificationType) override { return false; }
    HRESULT STDMETHODCALLTYPE RegisterEventNotification(IUnknown*, DXCoreNotificationType, PFN_DXCORE_NOTIFICATION_CALLBACK,
                                                        void*, uint32_t* cookie) override {
        TRACE("Factory::RegisterEventNotification -> E_NOTIMPL");
        if (cookie) *cookie = 0;
        return E_NOTIMPL;
    }
    HRESULT STDMETHODCALLTYPE UnregisterEventNotification(uint32_t) override { return S_OK; }
};

Factory g_factory;

HRESULT Adapter::GetFactory(REFIID riid, void** ppv) { return g_factory.QueryInterface(riid, ppv); }
HRESULT List::GetFactory(REFIID riid, void** ppv) { return g_factory.QueryInterface(riid, ppv); }

}  // namespace

extern "C" __attribute__((visibility("default"))) HRESULT DXCoreCreateAdapterFactory(REFIID riid, void** ppv) {
    HRESULT hr = g_factory.QueryInterface(riid, ppv);
    TRACE("DXCoreCreateAdapterFactory({%08x-...}) -> 0x%08x", (unsigned)riid.Data1, (unsigned)hr);
    return hr;
}
