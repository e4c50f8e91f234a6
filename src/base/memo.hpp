// Remembered results of a pure function on the per-call path. A program's calls come back with
// the same few keys (a loop of products of one shape meets the same profile bucket, kernel and
// program every time), and working a result out again costs more than a small GEMM can carry:
// parameter sets checked rule by rule, #defines and descriptions written out as strings (issue
// 17, where a small call's host time goes). Thread-safe; a result whose making throws is not
// kept; past kLimit keys the table starts over rather than grow without bound.
//
// Keys are looked up through a view (references to the caller's values) and copied only when a
// new result is kept. A View has hash(), matches(const Key&) and own() (the Key to keep).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace tandem::detail {

template <class Key, class Value>
class Memo {
 public:
  // The value for the key `view` shows: the remembered one, or make()'s, remembered. Two threads
  // that miss at once both make it; make is pure, so either result is right.
  template <class View, class Make>
  Value get(const View& view, Make&& make) {
    const uint64_t hash = view.hash();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto [from, to] = table_.equal_range(hash);
      for (auto it = from; it != to; ++it)
        if (view.matches(it->second.first)) return it->second.second;
    }
    Value value = std::forward<Make>(make)();
    std::lock_guard<std::mutex> lock(mutex_);
    if (table_.size() >= kLimit) table_.clear();
    table_.emplace(hash, std::make_pair(view.own(), value));
    return value;
  }

 private:
  static constexpr std::size_t kLimit = 256;
  std::mutex mutex_;
  std::unordered_multimap<uint64_t, std::pair<Key, Value>> table_;
};

// Hashing for views: FNV-1a over bytes, and over a name -> value map (kernel parameters).
inline uint64_t hash_bytes(const void* data, std::size_t size, uint64_t h = 1469598103934665603u) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211u;
  return h;
}

template <class T>
uint64_t hash_value(const T& v, uint64_t h) {
  return hash_bytes(&v, sizeof v, h);
}

inline uint64_t hash_map(const std::map<std::string, int>& m, uint64_t h = 1469598103934665603u) {
  for (const auto& [name, value] : m)
    h = hash_value(value, hash_bytes(name.data(), name.size(), h));
  return h;
}

// A view of a shared object that never changes, found again by its address (with `extra`, a value
// the result also depends on) rather than by hashing and comparing its contents. The kept key
// holds the object, so no other object can take that address while the key is remembered.
template <class Shared, class Extra = int>
struct ByAddress {
  using Key = std::pair<Shared, Extra>;
  const Shared& shared;
  Extra extra{};
  uint64_t hash() const { return hash_value(extra, hash_value(shared.get(), 0)); }
  bool matches(const Key& k) const { return k.first == shared && k.second == extra; }
  Key own() const { return {shared, extra}; }
};

}  // namespace tandem::detail
