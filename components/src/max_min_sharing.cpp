#include "poems/components/max_min_sharing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace poems::components {

std::uint32_t MaxMinSharing::add_resource(double bytes_per_ps) {
  Resource r;
  r.capacity = bytes_per_ps;
  resources_.push_back(std::move(r));
  return static_cast<std::uint32_t>(resources_.size() - 1);
}

std::uint32_t MaxMinSharing::start(Picoseconds now, std::span<const std::uint32_t> route, double bytes,
                                   std::uint64_t tag, double penalty) {
  const std::uint32_t f = add(now, route, bytes, tag, penalty);
  update(now);
  return f;
}

std::uint64_t MaxMinSharing::finish_next(Picoseconds now) {
  const std::uint64_t tag = remove_next(now);
  update(now);
  return tag;
}

void MaxMinSharing::update(Picoseconds now) {
  if (dirty_.empty()) return;
  rerate(now, dirty_);
  for (std::uint32_t r : dirty_) resources_[r].dirty = false;
  dirty_.clear();
}

std::uint32_t MaxMinSharing::add(Picoseconds now, std::span<const std::uint32_t> route, double bytes, std::uint64_t tag,
                                 double penalty) {
  std::uint32_t f;
  if (!free_flows_.empty()) {
    f = free_flows_.back();
    free_flows_.pop_back();
  } else {
    f = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& flow = flows_[f];
  flow.route.assign(route.begin(), route.end());
  flow.slot.resize(route.size());
  for (std::size_t i = 0; i < route.size(); ++i) {
    Resource& r = resources_[route[i]];
    flow.slot[i] = static_cast<std::uint32_t>(r.flows.size());
    r.flows.push_back(f);
    if (!r.dirty) {
      r.dirty = true;
      dirty_.push_back(route[i]);
    }
  }
  flow.remaining = bytes;
  flow.weight = 1.0 / penalty;
  flow.rate = 0;
  flow.since = now;
  flow.end = kNever;
  flow.tag = tag;
  flow.active = true;
  ++active_;
  return f;
}

Picoseconds MaxMinSharing::next_end() {
  while (!ends_.empty()) {
    const EndEntry& top = ends_.front();
    const Flow& f = flows_[top.flow];
    if (f.active && f.version == top.version) return top.end;
    std::pop_heap(ends_.begin(), ends_.end(), std::greater<>{});
    ends_.pop_back();
  }
  return kNever;
}

std::uint64_t MaxMinSharing::remove_next(Picoseconds) {
  next_end();  // the top is current
  const std::uint32_t f = ends_.front().flow;
  std::pop_heap(ends_.begin(), ends_.end(), std::greater<>{});
  ends_.pop_back();
  Flow& flow = flows_[f];
  flow.active = false;
  for (std::size_t i = 0; i < flow.route.size(); ++i) {
    Resource& r = resources_[flow.route[i]];
    if (!r.dirty) {
      r.dirty = true;
      dirty_.push_back(flow.route[i]);
    }
    const std::uint32_t at = flow.slot[i], last = r.flows.back();
    r.flows[at] = last;
    r.flows.pop_back();
    if (last != f) {  // the moved flow's index in this resource's list
      Flow& moved = flows_[last];
      for (std::size_t j = 0; j < moved.route.size(); ++j)
        if (moved.route[j] == flow.route[i]) moved.slot[j] = at;
    }
  }
  --active_;
  free_flows_.push_back(f);
  return flow.tag;
}

void MaxMinSharing::push_end(std::uint32_t f) {
  Flow& flow = flows_[f];
  ++flow.version;
  if (!(flow.rate > 0)) {
    flow.end = kNever;
    return;
  }
  // Rounded to the nearest ps, half up (a tie computed a hair low still rounds up).
  const double t = flow.remaining / flow.rate;
  flow.end = flow.since + static_cast<Picoseconds>(std::floor(t + 0.5 + 1e-6));
  ends_.push_back(EndEntry{flow.end, f, flow.version});
  std::push_heap(ends_.begin(), ends_.end(), std::greater<>{});
}

void MaxMinSharing::rerate(Picoseconds now, std::span<const std::uint32_t> from) {
  if (++stamp_ == 0) {  // stamps wrapped: clear them
    for (Resource& r : resources_) r.seen = 0;
    for (Flow& f : flows_) f.seen = f.fixed = 0;
    stamp_ = 1;
  }
  // The connected component: resources and the flows that cross them.
  component_resources_.clear();
  component_flows_.clear();
  queue_.clear();
  for (std::uint32_t r : from)
    if (resources_[r].seen != stamp_) {
      resources_[r].seen = stamp_;
      queue_.push_back(r);
    }
  for (std::size_t head = 0; head < queue_.size(); ++head) {
    const std::uint32_t r = queue_[head];
    component_resources_.push_back(r);
    for (std::uint32_t f : resources_[r].flows) {
      Flow& flow = flows_[f];
      if (flow.seen == stamp_) continue;
      flow.seen = stamp_;
      component_flows_.push_back(f);
      for (std::uint32_t q : flow.route)
        if (resources_[q].seen != stamp_) {
          resources_[q].seen = stamp_;
          queue_.push_back(q);
        }
    }
  }
  // Progressive filling, a level at a time: the resources of the smallest
  // fair share fix their flows at that share; a fixed flow's rate leaves the
  // other resources it crosses, whose shares can only grow. A level scans the
  // resources still open (most components have few distinct levels: the
  // flows of one bottleneck share one rate).
  // A resource's level: what is left over the weights of its flows not yet fixed.
  auto share_of = [](const Resource& r) { return std::max(r.left, 0.0) / r.unfixed_weight; };
  open_.clear();
  for (std::uint32_t r : component_resources_) {
    Resource& res = resources_[r];
    res.left = res.capacity;
    res.unfixed = static_cast<std::uint32_t>(res.flows.size());
    res.unfixed_weight = 0;
    for (std::uint32_t f : res.flows) res.unfixed_weight += flows_[f].weight;
    if (res.unfixed) open_.push_back(r);
  }
  while (!open_.empty()) {
    double level = std::numeric_limits<double>::infinity();
    for (std::uint32_t r : open_) level = std::min(level, share_of(resources_[r]));
    // Shares equal to the level but for rounding fix at it too.
    const double bound = level * (1 + 1e-12);
    for (std::uint32_t r : open_) {
      Resource& res = resources_[r];
      if (res.unfixed == 0 || share_of(res) > bound) continue;
      for (std::uint32_t f : res.flows) {
        Flow& flow = flows_[f];
        if (flow.fixed == stamp_) continue;
        flow.fixed = stamp_;
        flow.next_rate = level * flow.weight;
        for (std::uint32_t q : flow.route) {
          Resource& other = resources_[q];
          other.left -= flow.next_rate;
          other.unfixed_weight -= flow.weight;
          --other.unfixed;
        }
      }
    }
    std::erase_if(open_, [&](std::uint32_t r) { return resources_[r].unfixed == 0; });
  }
  for (std::uint32_t f : component_flows_) {
    Flow& flow = flows_[f];
    ++flows_rated_;
    if (now > flow.since) {
      flow.remaining = std::max(0.0, flow.remaining - flow.rate * static_cast<double>(now - flow.since));
      flow.since = now;
    }
    if (flow.next_rate != flow.rate || flow.end == kNever) {
      flow.rate = flow.next_rate;
      push_end(f);
    }
  }
}

}  // namespace poems::components
