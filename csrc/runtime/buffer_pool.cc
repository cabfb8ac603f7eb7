// A size-keyed free list behind a mutex.
#include "runtime/buffer_pool.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace uir::runtime {
namespace {

constexpr int64_t kKeptBytes = int64_t{256} << 20;

struct Pool {
  std::mutex mutex;
  std::multimap<int64_t, void*> free;  // by size
  int64_t kept = 0;
};

Pool& GetPool() {
  static Pool* pool = new Pool();  // never destroyed: buffers may come back at exit
  return *pool;
}

int64_t Rounded(int64_t bytes) { return (std::max<int64_t>(bytes, 64) + 63) / 64 * 64; }

}  // namespace

void* TakeBuffer(int64_t bytes) {
  const int64_t size = Rounded(bytes);
  Pool& pool = GetPool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.free.find(size);
    if (it != pool.free.end()) {
      void* p = it->second;
      pool.free.erase(it);
      pool.kept -= size;
      return p;
    }
  }
  void* p = std::aligned_alloc(64, static_cast<size_t>(size));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void GiveBuffer(void* data, int64_t bytes) {
  if (data == nullptr) return;
  const int64_t size = Rounded(bytes);
  Pool& pool = GetPool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (pool.kept + size <= kKeptBytes) {
      pool.free.emplace(size, data);
      pool.kept += size;
      return;
    }
  }
  std::free(data);
}

}  // namespace uir::runtime
