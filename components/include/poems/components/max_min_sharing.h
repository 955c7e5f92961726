// Flow-level max-min fair sharing of resource capacities (links, NICs, a
// backbone), the contention model SimGrid's users know (docs/network.md,
// "Contention"): every active message is a flow over its route, each flow's
// rate is the max-min fair share of the capacities it crosses (progressive
// filling), and a start or an end recomputes the rates of the flows that
// share a resource with it, directly or through others (its connected
// component), never the rest. Each flow's end is rescheduled when its rate
// changes; ends are kept in a heap with stale entries skipped, so no event
// rescans every flow.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "poems/components/loggops.h"

namespace poems::components {

class MaxMinSharing {
 public:
  static constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();

  // A resource of `bytes_per_ps` capacity (> 0); returns its id (0, 1, ...).
  std::uint32_t add_resource(double bytes_per_ps);
  std::size_t resources() const { return resources_.size(); }

  // A flow of `bytes` (> 0) over `route` (resource ids, each at most once)
  // starts at `now`, which is no earlier than any earlier call's. `tag` is
  // the caller's (given back by finish_next). Returns the flow's id, reused
  // once the flow has finished. `penalty` (> 0) weighs its share: on a
  // resource where flows are limited, each gets a rate inversely
  // proportional to its penalty (1 for all: plain max-min; SimGrid's
  // network models give each flow its route's latency, so long routes get
  // less, as TCP's round trip makes them).
  std::uint32_t start(Picoseconds now, std::span<const std::uint32_t> route, double bytes, std::uint64_t tag,
                      double penalty = 1.0);
  // The earliest end of an active flow at the current rates (kNever: none).
  Picoseconds next_end();
  // The flow whose end next_end() gave leaves at `now` (that end): returns
  // its tag; the flows it shared resources with are given new rates.
  std::uint64_t finish_next(Picoseconds now);

  // The same two, deferred: the rates are recomputed by update(), once for
  // every start and end since the last (many messages start and end at the
  // same instant). next_end() and rate() hold only after update().
  std::uint32_t add(Picoseconds now, std::span<const std::uint32_t> route, double bytes, std::uint64_t tag,
                    double penalty = 1.0);
  std::uint64_t remove_next(Picoseconds now);
  // Rates of the flows that share a resource with those added or removed
  // since the last update (their connected components), at `now`.
  void update(Picoseconds now);
  bool dirty() const { return !dirty_.empty(); }

  std::size_t active_flows() const { return active_; }
  // A flow's current rate (bytes per ps) and its end at that rate.
  double rate(std::uint32_t flow) const { return flows_[flow].rate; }
  Picoseconds end(std::uint32_t flow) const { return flows_[flow].end; }
  // How many rate computations touched a flow (the cost of the selective update).
  std::uint64_t flows_rated() const { return flows_rated_; }

 private:
  struct Resource {
    double capacity = 0;
    std::vector<std::uint32_t> flows;  // active flows crossing it
    std::uint32_t seen = 0;            // component search stamp
    bool dirty = false;                // in dirty_
    // Progressive filling's state for the component being rated.
    double left = 0;
    std::uint32_t unfixed = 0;
    double unfixed_weight = 0;  // sum of 1/penalty of its flows not yet fixed
  };
  struct Flow {
    std::vector<std::uint32_t> route;  // resource ids
    std::vector<std::uint32_t> slot;   // its index in each resource's flow list
    double remaining = 0;              // bytes left at `since`
    double rate = 0;                   // bytes per ps
    double weight = 1;                 // 1/penalty: its rate is weight x the level of its bottleneck
    Picoseconds since = 0;
    Picoseconds end = kNever;
    std::uint64_t tag = 0;
    std::uint32_t version = 0;  // heap entries of older versions are stale
    std::uint32_t seen = 0;
    std::uint32_t fixed = 0;  // == the stamp: its rate is set in this filling
    double next_rate = 0;
    bool active = false;
  };
  struct EndEntry {
    Picoseconds end;
    std::uint32_t flow, version;
    bool operator>(const EndEntry& o) const { return end != o.end ? end > o.end : flow > o.flow; }
  };

  // Rates of the component reached from these resources, at `now`.
  void rerate(Picoseconds now, std::span<const std::uint32_t> from);
  void push_end(std::uint32_t f);

  std::vector<Resource> resources_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<EndEntry> ends_;  // min-heap
  std::size_t active_ = 0;
  std::uint32_t stamp_ = 0;
  std::uint64_t flows_rated_ = 0;
  // Scratch, kept between calls: no allocation once warm.
  std::vector<std::uint32_t> component_resources_, component_flows_, queue_, dirty_;
  std::vector<std::uint32_t> open_;  // progressive filling: resources with flows not yet fixed
};

}  // namespace poems::components
