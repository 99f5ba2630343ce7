// Counting replacements of every replaceable global operator new / delete
// ([new.delete] in the C++ standard): plain, array, nothrow, sized and aligned forms.
// Compiled into the OBJECT library fleetmark_alloc_counter; see alloc_counter.h for
// how a binary opts in. They allocate with malloc / posix_memalign (never through
// operator new, so counting cannot recurse), follow the standard new-handler loop on
// failure, and count with relaxed atomics only.
#include <cstdlib>
#include <new>

#include "engine/measure/alloc_counter.h"

namespace {

namespace counter = fleetmark::engine::alloc_counter_internal;

// Registers this object file as linked (static initialisation; see
// AllocationCounterActive()).
[[maybe_unused]] const bool registered = counter::MarkActive();

// One attempt: malloc when `align` is 0, posix_memalign otherwise; counts a success.
void* TryAllocate(std::size_t size, std::size_t align) noexcept {
  void* p = nullptr;
  if (align == 0) {
    p = std::malloc(size);
  } else if (posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, size) != 0) {
    p = nullptr;
  }
  if (p != nullptr) counter::RecordAllocation(size);
  return p;
}

// The standard operator new loop ([new.delete.single]): size 0 yields a unique
// pointer; on failure call the installed new_handler (which may throw) until an
// attempt succeeds, or throw std::bad_alloc when there is none.
void* AllocateOrThrow(std::size_t size, std::size_t align) {
  if (size == 0) size = 1;
  while (true) {
    if (void* p = TryAllocate(size, align)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

// The nothrow forms behave as the throwing ones inside a try block.
void* AllocateOrNull(std::size_t size, std::size_t align) noexcept {
  try {
    return AllocateOrThrow(size, align);
  } catch (...) {
    return nullptr;
  }
}

std::size_t Align(std::align_val_t alignment) { return static_cast<std::size_t>(alignment); }

void Release(void* p) noexcept {
  if (p == nullptr) return;
  counter::RecordDeallocation();
  std::free(p);
}

}  // namespace

void* operator new(std::size_t size) { return AllocateOrThrow(size, 0); }
void* operator new[](std::size_t size) { return AllocateOrThrow(size, 0); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return AllocateOrNull(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return AllocateOrNull(size, 0); }
void* operator new(std::size_t size, std::align_val_t alignment) { return AllocateOrThrow(size, Align(alignment)); }
void* operator new[](std::size_t size, std::align_val_t alignment) { return AllocateOrThrow(size, Align(alignment)); }
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return AllocateOrNull(size, Align(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return AllocateOrNull(size, Align(alignment));
}

void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete(void* p, std::size_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t) noexcept { Release(p); }
void operator delete(void* p, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { Release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { Release(p); }
