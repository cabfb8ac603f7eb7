// A free list ordered by when each buffer came back, indexed by size,
// behind a mutex.
#include "runtime/buffer_pool.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace uir::runtime {
namespace {

struct Kept {
  int64_t size;
  void* data;
};

struct Pool {
  std::mutex mutex;
  std::list<Kept> order;  // oldest first
  std::multimap<int64_t, std::list<Kept>::iterator> by_size;
  int64_t kept = 0;
  int64_t limit = kKeptBytes;

  void Erase(std::list<Kept>::iterator it) {
    auto [first, last] = by_size.equal_range(it->size);
    for (auto m = first; m != last; ++m) {
      if (m->second == it) {
        by_size.erase(m);
        break;
      }
    }
    kept -= it->size;
    order.erase(it);
  }
};

Pool& GetPool() {
  static Pool* pool = new Pool();  // never destroyed: buffers may come back at exit
  return *pool;
}

// A whole number of the buffer's alignment, as aligned_alloc requires (C11;
// glibc lets it pass, AddressSanitizer does not).
int64_t Rounded(int64_t bytes) {
  const int64_t align = PageAligned(bytes) ? 4096 : 64;
  return (std::max<int64_t>(bytes, 64) + align - 1) / align * align;
}

// Asks for transparent huge pages on a large fresh buffer, as NumPy does
// for its arrays: first-touch page faults, which cost as much as a
// streaming kernel over fresh memory, become 512 times fewer.
void AdviseHugePages(void* p, int64_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr int64_t kHugeFrom = int64_t{4} << 20;
  if (size < kHugeFrom) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(size)) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
#else
  (void)p;
  (void)size;
#endif
}

}  // namespace

void* TakeBuffer(int64_t bytes) {
  const int64_t size = Rounded(bytes);
  Pool& pool = GetPool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.by_size.find(size);
    if (it != pool.by_size.end()) {
      void* p = it->second->data;
      pool.Erase(it->second);
      return p;
    }
  }
  void* p = std::aligned_alloc(static_cast<size_t>(PageAligned(size) ? 4096 : 64),
                               static_cast<size_t>(size));
  if (p == nullptr) throw std::bad_alloc();
  AdviseHugePages(p, size);
  return p;
}

void GiveBuffer(void* data, int64_t bytes) {
  if (data == nullptr) return;
  const int64_t size = Rounded(bytes);
  Pool& pool = GetPool();
  std::list<Kept> evicted;
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (size <= pool.limit) {
      // Make room by letting the buffers that came back longest ago go:
      // the one just given back is the likeliest to be asked for next.
      while (pool.kept + size > pool.limit && !pool.order.empty()) {
        evicted.push_back(pool.order.front());
        pool.Erase(pool.order.begin());
      }
      pool.order.push_back({size, data});
      pool.by_size.emplace(size, std::prev(pool.order.end()));
      pool.kept += size;
      data = nullptr;
    }
  }
  for (const Kept& k : evicted) std::free(k.data);
  std::free(data);
}

int64_t KeptBytes() {
  Pool& pool = GetPool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  return pool.kept;
}

int64_t SetKeptLimitForTesting(int64_t limit) {
  Pool& pool = GetPool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  const int64_t before = pool.limit;
  pool.limit = limit;
  while (pool.kept > pool.limit) {
    std::free(pool.order.front().data);
    pool.Erase(pool.order.begin());
  }
  return before;
}

}  // namespace uir::runtime
