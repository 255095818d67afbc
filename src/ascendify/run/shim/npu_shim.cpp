// ascendify run, mode "shim": a PrivateUse1 ("npu") backend whose device memory is host memory.
//
// C++ gives what Python cannot: an allocator with per-device accounting (and an HBM capacity),
// a device guard for N devices, the PrivateUse1 hooks (pinned host memory, generators), the view and
// metadata kernels that must share a Storage, and zero-copy aliases between npu and cpu tensors.
// Every other op reaches ascendify/run/shim_backend.py (KB policy, then the CPU kernel on aliases).
// Built by ascendify/run/shim/__init__.py with torch.utils.cpp_extension, cached per torch version.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/Resize.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {
constexpr int kMaxDevices = 64;
constexpr size_t kHeader = 64;  // bookkeeping block in front of each allocation (keeps 64-byte alignment)

std::atomic<int> g_count{8};
std::atomic<int64_t> g_capacity{int64_t(64) << 30};
thread_local c10::DeviceIndex g_current = 0;
std::atomic<int64_t> g_allocated[kMaxDevices];
std::atomic<int64_t> g_peak[kMaxDevices];
std::atomic<int64_t> g_num_allocs[kMaxDevices];
std::atomic<int64_t> g_num_ooms[kMaxDevices];

void account(int idx, int64_t n) {
  int64_t now = g_allocated[idx].fetch_add(n) + n;
  int64_t peak = g_peak[idx].load();
  while (now > peak && !g_peak[idx].compare_exchange_weak(peak, now)) {
  }
}

struct Block {
  int idx;
  int64_t nbytes;
};

void free_block(void* ctx) {
  auto* b = static_cast<Block*>(ctx);
  account(b->idx, -b->nbytes);
  c10::free_cpu(ctx);
}

struct DeviceAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    int idx = g_current;
    int64_t used = g_allocated[idx].load();
    if (used + (int64_t)n > g_capacity.load()) {
      g_num_ooms[idx].fetch_add(1);
      TORCH_CHECK_WITH(OutOfMemoryError, false, "NPU out of memory. Tried to allocate ",
                       (double)n / 1048576.0, " MiB (NPU ", idx, "; ", (double)g_capacity.load() / 1073741824.0,
                       " GiB total capacity; ", (double)used / 1073741824.0,
                       " GiB already allocated) [emulated by ascendify run]");
    }
    void* base = c10::alloc_cpu(n + kHeader);
    auto* b = static_cast<Block*>(base);
    b->idx = idx;
    b->nbytes = (int64_t)n;
    account(idx, (int64_t)n);
    g_num_allocs[idx].fetch_add(1);
    return {static_cast<char*>(base) + kHeader, base, &free_block, c10::Device(c10::DeviceType::PrivateUse1, idx)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dst, const void* src, std::size_t n) const override { std::memcpy(dst, src, n); }
};
DeviceAllocator g_device_allocator;

std::mutex g_pinned_mu;
std::unordered_set<const void*> g_pinned;
void free_pinned(void* p) {
  {
    std::lock_guard<std::mutex> lock(g_pinned_mu);
    g_pinned.erase(p);
  }
  c10::free_cpu(p);
}
struct PinnedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    void* p = c10::alloc_cpu(n);
    {
      std::lock_guard<std::mutex> lock(g_pinned_mu);
      g_pinned.insert(p);
    }
    return {p, p, &free_pinned, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_pinned; }
  void copy_data(void* dst, const void* src, std::size_t n) const override { std::memcpy(dst, src, n); }
};
PinnedAllocator g_pinned_allocator;

void set_current(c10::DeviceIndex d) {
  if (d >= 0) g_current = d;
}

// Synchronous device: streams are all the default stream, events complete at once.
struct Guard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::PrivateUse1; }
  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    set_current(d.index());
    return old;
  }
  c10::Device getDevice() const override { return {c10::DeviceType::PrivateUse1, g_current}; }
  void setDevice(c10::Device d) const override { set_current(d.index()); }
  void uncheckedSetDevice(c10::Device d) const noexcept override { set_current(d.index()); }
  c10::Stream getStream(c10::Device d) const noexcept override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getNewStream(c10::Device d, int) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, s.device());
  }
  c10::DeviceIndex deviceCount() const noexcept override { return (c10::DeviceIndex)g_count.load(); }
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  void synchronizeDevice(const c10::DeviceIndex) const override {}
};

std::vector<at::Generator>& default_generators() {
  static std::vector<at::Generator> gens = [] {
    std::vector<at::Generator> v;
    for (int k = 0; k < kMaxDevices; ++k) v.push_back(at::detail::createCPUGenerator());
    return v;
  }();
  return gens;
}

void resize_storage(const c10::Storage& s, size_t n) {
  auto* impl = s.unsafeGetStorageImpl();
  TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
  c10::DeviceGuard guard(s.device());
  c10::DataPtr fresh = g_device_allocator.allocate(n);
  size_t keep = std::min(n, impl->nbytes());
  if (keep > 0 && impl->data() != nullptr) std::memcpy(fresh.get(), impl->data(), keep);
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(n);
}

struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return (c10::DeviceIndex)g_count.load(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_current(d); }
  c10::DeviceIndex getCurrentDevice() const override { return g_current; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = g_current;
    set_current(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  bool isPinnedPtr(const void* p) const override {
    std::lock_guard<std::mutex> lock(g_pinned_mu);
    return g_pinned.count(p) > 0;
  }
  c10::Allocator* getPinnedMemoryAllocator() const override { return &g_pinned_allocator; }
  at::Device getDeviceFromPtr(void*) const override { return {c10::DeviceType::PrivateUse1, g_current}; }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex i) const override {
    return default_generators()[i < 0 ? g_current : i];
  }
  at::Generator getNewGenerator(c10::DeviceIndex) const override { return at::detail::createCPUGenerator(); }
  // called by at::native::resize_bytes_nocuda for PrivateUse1 storages: a new block, the old bytes copied
  void resizePrivateUse1Bytes(const c10::Storage& s, size_t n) const override { resize_storage(s, n); }
};

const c10::DispatchKeySet kNpuKeys(c10::DispatchKey::PrivateUse1);

c10::Device device_or_current(std::optional<at::Device> d) {
  if (d && d->has_index()) return *d;
  return c10::Device(c10::DeviceType::PrivateUse1, g_current);
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                               std::optional<at::Device> device, std::optional<bool>,
                               std::optional<at::MemoryFormat> mf) {
  c10::DeviceGuard guard(device_or_current(device));
  return at::detail::empty_generic(size, &g_device_allocator, kNpuKeys, c10::dtype_or_default(dtype), mf);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout>, std::optional<at::Device> device, std::optional<bool>) {
  c10::DeviceGuard guard(device_or_current(device));
  return at::detail::empty_strided_generic(size, stride, &g_device_allocator, kNpuKeys, c10::dtype_or_default(dtype));
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size, std::optional<at::MemoryFormat> mf) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  int64_t need = (impl->numel() + impl->storage_offset()) * (int64_t)self.dtype().itemsize();
  if (impl->numel() > 0 && need > (int64_t)impl->storage().nbytes()) {
    resize_storage(impl->storage(), (size_t)need);
  }
  if (mf) impl->empty_tensor_restride(*mf);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, at::Storage src, int64_t offset, c10::IntArrayRef size,
                        c10::IntArrayRef stride) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(src));
  impl->set_sizes_and_strides(size, stride, offset);
  return self;
}
at::Tensor& set_storage_whole(at::Tensor& self, at::Storage src) {
  int64_t n = (int64_t)(src.nbytes() / self.dtype().itemsize());
  return set_storage(self, std::move(src), 0, {n}, {1});
}
at::Tensor& set_tensor(at::Tensor& self, const at::Tensor& src) {
  return set_storage(self, src.storage(), src.storage_offset(), src.sizes(), src.strides());
}
at::Tensor& set_empty(at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  at::Storage s(at::Storage::use_byte_size_t(), 0, &g_device_allocator, true);
  return set_storage(self, std::move(s), 0, {0}, {});
}

// ---- zero-copy aliases -------------------------------------------------------------------------------------
// as_cpu: a CPU tensor on the same memory (keeps the npu Storage alive); adopt: an npu tensor on the memory of a
// CPU result (keeps the CPU Storage alive and counts its bytes on device idx).
at::Tensor as_cpu(const at::Tensor& t) {
  if (!t.defined() || t.device().type() != c10::DeviceType::PrivateUse1) return t;
  const auto& st = t.storage();
  c10::Storage alias(c10::Storage::use_byte_size_t(), st.nbytes(),
                     c10::DataPtr(st.mutable_data(), new c10::Storage(st),
                                  [](void* c) { delete static_cast<c10::Storage*>(c); }, c10::Device(c10::DeviceType::CPU)),
                     nullptr, false);
  auto r = at::detail::make_tensor<c10::TensorImpl>(std::move(alias), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                    t.dtype());
  r.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  return r;
}

struct Adopted {
  c10::Storage keep;
  int idx;
  int64_t nbytes;
};

at::Tensor adopt(const at::Tensor& t, int64_t idx) {
  if (!t.defined() || t.device().type() != c10::DeviceType::CPU) return t;
  const auto& st = t.storage();
  int64_t n = (int64_t)st.nbytes();
  account((int)idx, n);
  g_num_allocs[idx].fetch_add(1);
  c10::Storage ns(c10::Storage::use_byte_size_t(), st.nbytes(),
                  c10::DataPtr(st.mutable_data(), new Adopted{st, (int)idx, n},
                               [](void* c) {
                                 auto* a = static_cast<Adopted*>(c);
                                 account(a->idx, -a->nbytes);
                                 delete a;
                               },
                               c10::Device(c10::DeviceType::PrivateUse1, (c10::DeviceIndex)idx)),
                  &g_device_allocator, true);
  auto r = at::detail::make_tensor<c10::TensorImpl>(std::move(ns), kNpuKeys, t.dtype());
  r.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  return r;
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool) {
  as_cpu(dst).copy_(as_cpu(self));
  return dst;
}
at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) resize_(dst, self.sizes(), std::nullopt);
  as_cpu(dst).copy_(as_cpu(self));
  return dst;
}

std::vector<int64_t> mem_stats(int64_t idx) {
  return {g_allocated[idx].load(), g_peak[idx].load(), g_num_allocs[idx].load(), g_num_ooms[idx].load()};
}
void reset_peak(int64_t idx) { g_peak[idx].store(g_allocated[idx].load()); }
void configure(int64_t count, int64_t capacity) {
  if (count > 0 && count <= kMaxDevices) g_count = (int)count;
  if (capacity > 0) g_capacity = capacity;
}
void set_seed(int64_t idx, int64_t seed) { default_generators()[idx].set_current_seed((uint64_t)seed); }

// ---- the fast path: ops whose judgement needs no Python (an NPU kernel in the KB, no generator, no out=,
// no cpu tensor allowed) run here: device checks, CPU kernel on aliases, results adopted.  Python is called
// only the first time an op meets a float64/complex tensor (the KB's dtype finding, with the user's frame).
std::mutex g_fast_mu;
std::unordered_map<c10::OperatorName, int64_t> g_fast_counts;
std::unordered_set<std::string> g_dtype_seen;
pybind11::object* g_on_dtype = nullptr;

bool bad_dtype(c10::ScalarType t) {
  return t == c10::ScalarType::Double || t == c10::ScalarType::ComplexFloat || t == c10::ScalarType::ComplexDouble ||
         t == c10::ScalarType::ComplexHalf;
}

[[noreturn]] void mixed(const c10::OperatorHandle& op, int64_t a, const std::string& b) {
  TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, npu:", a,
              " and ", b, "! (when checking argument for argument in method wrapper_NPU__", op.schema().name(), ")");
}

struct Seen {
  int64_t idx = -1;
  c10::ScalarType bad = c10::ScalarType::Undefined;
  std::vector<std::pair<c10::TensorImpl*, at::Tensor>> pairs;  // cpu alias impl -> npu tensor
};

at::Tensor to_alias(const c10::OperatorHandle& op, const at::Tensor& t, Seen& s) {
  if (!t.defined()) return t;
  if (t.device().type() == c10::DeviceType::PrivateUse1) {
    int64_t i = t.device().index();
    if (s.idx == -1) s.idx = i;
    else if (i != s.idx) mixed(op, s.idx, "npu:" + std::to_string(i));
    if (bad_dtype(t.scalar_type())) s.bad = t.scalar_type();
    at::Tensor c = as_cpu(t);
    s.pairs.emplace_back(c.unsafeGetTensorImpl(), t);
    return c;
  }
  if (t.dim() != 0) {
    // an npu tensor seen later still makes this an error; remember it with index -2
    if (s.idx >= 0) mixed(op, s.idx, t.device().str());
    s.pairs.emplace_back(nullptr, t);
  }
  return t;
}

at::Tensor back(const at::Tensor& t, const Seen& s) {
  if (!t.defined() || t.device().type() != c10::DeviceType::CPU) return t;
  for (const auto& pr : s.pairs)
    if (pr.first == t.unsafeGetTensorImpl()) return pr.second;
  return adopt(t, s.idx);
}

void fast_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t nargs = schema.arguments().size();
  const size_t base = stack->size() - nargs;
  Seen s;
  for (size_t k = 0; k < nargs; ++k) {
    c10::IValue& iv = (*stack)[base + k];
    if (iv.isTensor()) {
      iv = to_alias(op, iv.toTensor(), s);
    } else if (iv.isTensorList()) {
      auto lst = iv.toTensorList();
      c10::List<at::Tensor> out;
      out.reserve(lst.size());
      for (const at::Tensor& t : lst) out.push_back(to_alias(op, t, s));
      iv = out;
    }
  }
  if (s.idx >= 0)
    for (const auto& pr : s.pairs)
      if (pr.first == nullptr) mixed(op, s.idx, pr.second.device().str());
  if (s.idx < 0) s.idx = g_current;
  {
    std::lock_guard<std::mutex> lock(g_fast_mu);
    ++g_fast_counts[schema.operator_name()];
  }
  if (s.bad != c10::ScalarType::Undefined && g_on_dtype != nullptr) {
    std::string key = c10::toString(schema.operator_name()) + "|" + c10::toString(s.bad);
    bool first;
    {
      std::lock_guard<std::mutex> lock(g_fast_mu);
      first = g_dtype_seen.insert(key).second;
    }
    if (first) {
      pybind11::gil_scoped_acquire gil;
      (*g_on_dtype)(schema.name(), schema.overload_name(), std::string(c10::toString(s.bad)));
    }
  }
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  const size_t nret = schema.returns().size();
  const size_t rbase = stack->size() - nret;
  for (size_t k = 0; k < nret; ++k) {
    c10::IValue& iv = (*stack)[rbase + k];
    if (iv.isTensor()) {
      iv = back(iv.toTensor(), s);
    } else if (iv.isTensorList()) {
      auto lst = iv.toTensorList();
      c10::List<at::Tensor> out;
      out.reserve(lst.size());
      for (const at::Tensor& t : lst) out.push_back(back(t, s));
      iv = out;
    }
  }
}

std::unique_ptr<torch::Library> g_fast_lib;

int64_t register_fast(const std::vector<std::string>& names, pybind11::object on_dtype) {
  if (!g_on_dtype) g_on_dtype = new pybind11::object(on_dtype);  // lives as long as the process
  if (!g_fast_lib)
    g_fast_lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten",
                                                  std::optional<c10::DispatchKey>(c10::DispatchKey::PrivateUse1),
                                                  __FILE__, __LINE__);
  int64_t n = 0;
  for (const auto& name : names) {
    g_fast_lib->impl(name.c_str(), torch::CppFunction::makeFromBoxedFunction<&fast_kernel>());
    ++n;
  }
  return n;
}

std::vector<std::tuple<std::string, std::string, int64_t>> fast_counts() {
  std::lock_guard<std::mutex> lock(g_fast_mu);
  std::vector<std::tuple<std::string, std::string, int64_t>> out;
  for (const auto& kv : g_fast_counts) out.emplace_back(kv.first.name, kv.first.overload_name, kv.second);
  return out;
}
}  // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, Guard);

static bool g_registered = [] {
  c10::SetAllocator(c10::DeviceType::PrivateUse1, &g_device_allocator);
  static Hooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  return true;
}();

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("unfold", at::native::unfold);
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage_storage_offset", set_storage);
  m.impl("set_.source_Storage", set_storage_whole);
  m.impl("set_.source_Tensor", set_tensor);
  m.impl("set_", set_empty);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}

// Python entry points (pybind11, not torch.ops: the per-op aliasing is on the hot path, a direct call costs
// about a microsecond where an operator call costs several)
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("as_cpu", &as_cpu);
  m.def("adopt", &adopt);
  m.def("mem_stats", &mem_stats);
  m.def("reset_peak", &reset_peak);
  m.def("configure", &configure);
  m.def("set_seed", &set_seed);
  m.def("register_fast", &register_fast);
  m.def("fast_counts", &fast_counts);
}
