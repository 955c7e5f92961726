// Entries by name (evaluators, closed forms, kernels, programs, ...), safe to
// use from several threads. Registering a name again replaces its entry in
// place; entries are never removed, so a pointer from find() stays valid as
// long as the registry (it then sees the latest registration of that name).
// What a registry adds (built-ins on first use, checks of what is registered,
// its error messages) stays with the registry that uses this.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "poems/base/suggest.h"

namespace poems::base {

// The order in which a registry lists its names and entries.
enum class RegistryOrder {
  ByName,        // sorted by name
  Registration,  // first registered first; a replaced entry keeps its place
};

template <typename T>
class Registry {
 public:
  explicit Registry(RegistryOrder order = RegistryOrder::ByName) : order_(order) {}
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers `entry` as `name`, replacing what was registered as `name`.
  void add(const std::string& name, T entry) {
    std::lock_guard lock(mutex_);
    auto [it, added] = index_.try_emplace(name, slots_.size());
    if (added)
      slots_.push_back({name, std::move(entry)});  // a deque: pointers to earlier entries stay valid
    else
      slots_[it->second].entry = std::move(entry);
  }

  // The entry registered as `name`, or nullptr.
  const T* find(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &slots_[it->second].entry;
  }

  // A copy of the entry registered as `name` taken under the lock (for an
  // entry the caller keeps and calls, such as a factory), or nothing.
  std::optional<T> find_copy(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = index_.find(name);
    return it == index_.end() ? std::nullopt : std::optional<T>(slots_[it->second].entry);
  }

  // The first entry in the listing order, or nullptr when none is registered.
  const T* first() const {
    std::lock_guard lock(mutex_);
    if (slots_.empty()) return nullptr;
    return order_ == RegistryOrder::ByName ? &slots_[index_.begin()->second].entry : &slots_.front().entry;
  }

  // The registered names, in the listing order.
  std::vector<std::string> names() const {
    return names_where([](const T&) { return true; });
  }

  // The names of the entries `keep(entry)` is true for, in the listing order.
  template <typename Keep>
  std::vector<std::string> names_where(Keep keep) const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for_each_slot([&](const Slot& s) {
      if (keep(s.entry)) out.push_back(s.name);
    });
    return out;
  }

  // Copies of the registered entries, in the listing order.
  std::vector<T> entries() const {
    std::lock_guard lock(mutex_);
    std::vector<T> out;
    for_each_slot([&](const Slot& s) { out.push_back(s.entry); });
    return out;
  }

 private:
  struct Slot {
    std::string name;
    T entry;
  };

  template <typename Visit>
  void for_each_slot(Visit visit) const {
    if (order_ == RegistryOrder::Registration)
      for (const Slot& s : slots_) visit(s);
    else
      for (const auto& [name, position] : index_) visit(slots_[position]);
  }

  const RegistryOrder order_;
  mutable std::mutex mutex_;
  std::deque<Slot> slots_;                    // in registration order
  std::map<std::string, std::size_t> index_;  // name -> position in slots_
};

// "a, b, c" for a message listing the known names, or `when_none`.
inline std::string known_names(const std::vector<std::string>& names, const std::string& when_none = "none") {
  return names.empty() ? when_none : name_list(names);
}

}  // namespace poems::base
