#include "poems/components/topology.h"
#include "poems/base/file_bytes.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace poems::components {

namespace {

constexpr std::uint64_t kMaxLinks = std::uint64_t{1} << 32;  // link ids are 32 bits
// A file link's latency (ps) and per-byte time (fs/B) are at most 2^49, so a
// route of up to 2^13 links stays within 2^62.
constexpr std::uint64_t kMaxFileLinkValue = std::uint64_t{1} << 49;
constexpr std::uint64_t kMaxRouteTotal = std::uint64_t{1} << 62;

std::string dims_text(const std::vector<std::uint32_t>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

[[noreturn]] void fail(const std::string& message) { throw TopologyError(message); }

// The index of the pair x < y among the n(n-1)/2 pairs of 0..n-1.
std::uint64_t pair_index(std::uint64_t x, std::uint64_t y, std::uint64_t n) {
  if (x > y) std::swap(x, y);
  return x * n - x * (x + 1) / 2 + (y - x - 1);
}

std::string dimension_name(std::size_t i) {
  static const char* const kNames[] = {"x", "y", "z"};
  return i < 3 ? kNames[i] : "d" + std::to_string(i);
}

void want_dims(const TopologySpec& spec, std::size_t count, const char* form) {
  if (spec.dims.size() != count)
    fail(std::string(topology_name(spec.kind)) + " topology wants " + form + ", got " +
         std::to_string(spec.dims.size()) + " value" + (spec.dims.size() == 1 ? "" : "s"));
}

// depth of vertex i in the complete k-ary tree numbered breadth first (k >= 2).
std::uint32_t tree_depth(std::uint64_t i, std::uint64_t k) {
  std::uint32_t depth = 0;
  std::uint64_t first_of_next = 1, width = 1;  // first index of depth+1, vertices at depth
  while (i >= first_of_next) {
    width *= k;
    first_of_next += width;
    ++depth;
  }
  return depth;
}

// ---- network file parsing ----

struct Token {
  std::string_view text;
  std::uint32_t col;
};

std::vector<Token> tokenize(std::string_view line) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    tokens.push_back({line.substr(start, i - start), static_cast<std::uint32_t>(start + 1)});
  }
  return tokens;
}

std::optional<std::uint32_t> parse_count(std::string_view text) {
  std::uint32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A decimal number followed by one of `units` (name and its scale), or nullopt.
std::optional<double> parse_quantity(std::string_view text,
                                     std::initializer_list<std::pair<std::string_view, double>> units) {
  std::size_t split = 0;
  while (split < text.size() && (std::isdigit(static_cast<unsigned char>(text[split])) || text[split] == '.' ||
                                 text[split] == 'e' || text[split] == 'E' || text[split] == '+' || text[split] == '-'))
    ++split;
  // An exponent's 'e' that is not followed by digits belongs to no unit we accept anyway.
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + split, value);
  if (ec != std::errc() || end != text.data() + split || split == 0 || !std::isfinite(value)) return std::nullopt;
  std::string_view unit = text.substr(split);
  for (const auto& [name, scale] : units)
    if (unit == name) return value * scale;
  return std::nullopt;
}

}  // namespace

const char* topology_name(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::Complete: return "complete";
    case TopologyKind::Ring: return "ring";
    case TopologyKind::Mesh: return "mesh";
    case TopologyKind::Torus: return "torus";
    case TopologyKind::Hypercube: return "hypercube";
    case TopologyKind::Tree: return "tree";
    case TopologyKind::FatTree: return "fat-tree";
    case TopologyKind::Dragonfly: return "dragonfly";
    case TopologyKind::File: return "file";
  }
  return "?";
}

std::optional<TopologyKind> parse_topology(std::string_view name) {
  for (auto kind :
       {TopologyKind::Complete, TopologyKind::Ring, TopologyKind::Mesh, TopologyKind::Torus, TopologyKind::Hypercube,
        TopologyKind::Tree, TopologyKind::FatTree, TopologyKind::Dragonfly, TopologyKind::File})
    if (name == topology_name(kind)) return kind;
  if (name == "fattree") return TopologyKind::FatTree;
  return std::nullopt;
}

Topology Topology::build(const TopologySpec& spec) {
  if (spec.kind == TopologyKind::File) {
    const std::optional<std::string> text = base::read_file_bytes(spec.file);
    if (!text) fail(spec.file + ": error: cannot read the network file: " + std::strerror(errno));
    return from_network_text(spec.file, *text);
  }
  Topology t;
  t.kind_ = spec.kind;
  t.dims_ = spec.dims;
  t.hop_latency_ = spec.hop_latency;
  t.link_per_byte_ = spec.link_per_byte;
  const std::string kind = topology_name(spec.kind);
  const std::uint64_t max_nodes = kMaxTopologyNodes;
  std::uint64_t nodes = 0, links = 0, max_hops = 0;
  switch (spec.kind) {
    case TopologyKind::Complete: {
      want_dims(spec, 1, "{nodes}");
      nodes = spec.dims[0];
      // n(n-1)/2 links numbered in 32 bits.
      if (nodes < 1 || nodes > 92682)
        fail("complete topology nodes must be 1 to 92682 (its n(n-1)/2 links are numbered in 32 bits), got " +
             std::to_string(nodes));
      links = nodes * (nodes - 1) / 2;
      max_hops = 1;
      t.class_names_ = {"direct"};
      break;
    }
    case TopologyKind::Ring:
    case TopologyKind::Mesh:
    case TopologyKind::Torus: {
      if (spec.kind == TopologyKind::Ring) {
        want_dims(spec, 1, "{nodes}");
        if (spec.dims[0] < 2 || spec.dims[0] > max_nodes)
          fail("ring nodes must be 2 to " + std::to_string(max_nodes) + ", got " + std::to_string(spec.dims[0]));
      }
      if (spec.dims.empty()) fail(kind + " topology wants its dimensions {k1, ..., km}, got none");
      nodes = 1;
      for (std::uint32_t k : spec.dims) {
        if (k < 2)
          fail(kind + " dimensions must be 2 or more each, got " + std::to_string(k) + " in " + dims_text(spec.dims));
        nodes *= k;
        if (nodes > max_nodes)
          fail(kind + " " + dims_text(spec.dims) + " has more than " + std::to_string(max_nodes) + " nodes");
      }
      std::uint64_t stride = 1;
      for (std::size_t i = 0; i < spec.dims.size(); ++i) {
        const std::uint64_t k = spec.dims[i];
        t.strides_.push_back(stride);
        t.offsets_.push_back(links);
        stride *= k;
        // A torus node owns the link to its positive neighbour in each dimension; a
        // mesh has k-1 links along each line of k nodes.
        links += spec.kind == TopologyKind::Mesh ? (k - 1) * (nodes / k) : nodes;
        max_hops += spec.kind == TopologyKind::Mesh ? k - 1 : k / 2;
        t.class_names_.push_back(spec.kind == TopologyKind::Ring ? "ring" : dimension_name(i));
      }
      break;
    }
    case TopologyKind::Hypercube: {
      want_dims(spec, 1, "{m} (2^m nodes)");
      if (spec.dims[0] < 1 || spec.dims[0] > 24)
        fail("hypercube dimension must be 1 to 24 (2^m nodes), got " + std::to_string(spec.dims[0]));
      nodes = std::uint64_t{1} << spec.dims[0];
      links = spec.dims[0] * (nodes / 2);
      max_hops = spec.dims[0];
      for (std::uint32_t i = 0; i < spec.dims[0]; ++i) t.class_names_.push_back(dimension_name(i));
      break;
    }
    case TopologyKind::Tree: {
      want_dims(spec, 2, "{k, nodes}");
      if (spec.dims[0] < 1) fail("tree arity k must be 1 or more, got 0");
      if (spec.dims[1] < 1 || spec.dims[1] > max_nodes)
        fail("tree nodes must be 1 to " + std::to_string(max_nodes) + ", got " + std::to_string(spec.dims[1]));
      nodes = spec.dims[1];
      links = nodes - 1;
      max_hops = 2 * (spec.dims[0] == 1 ? nodes - 1 : tree_depth(nodes - 1, spec.dims[0]));
      t.class_names_ = {"tree"};
      break;
    }
    case TopologyKind::FatTree: {
      want_dims(spec, 2, "{k, n} (a k-ary n-tree, k^n nodes)");
      if (spec.dims[0] < 2) fail("fat tree arity k must be 2 or more, got " + std::to_string(spec.dims[0]));
      if (spec.dims[1] < 1) fail("fat tree levels n must be 1 or more, got 0");
      nodes = 1;
      t.strides_.push_back(1);
      for (std::uint32_t l = 0; l < spec.dims[1]; ++l) {
        nodes *= spec.dims[0];
        if (nodes > max_nodes)
          fail("fat tree " + std::to_string(spec.dims[0]) + "-ary " + std::to_string(spec.dims[1]) +
               "-tree has more than " + std::to_string(max_nodes) + " nodes (k^n)");
        t.strides_.push_back(nodes);
      }
      links = spec.dims[1] * nodes;  // k^n links between each pair of adjacent levels, the nodes' included
      max_hops = 2 * spec.dims[1];
      t.class_names_ = {"node"};
      for (std::uint32_t l = 1; l < spec.dims[1]; ++l)
        t.class_names_.push_back("level" + std::to_string(l) + "-" + std::to_string(l + 1));
      break;
    }
    case TopologyKind::Dragonfly: {
      want_dims(spec, 3, "{groups, routers per group, nodes per router}");
      const char* names[] = {"groups", "routers per group", "nodes per router"};
      for (int i = 0; i < 3; ++i)
        if (spec.dims[i] < 1) fail(std::string("dragonfly ") + names[i] + " must be 1 or more, got 0");
      const std::uint64_t g = spec.dims[0], a = spec.dims[1], p = spec.dims[2];
      if (g * a > max_nodes || g * a * p > max_nodes)
        fail("dragonfly " + std::to_string(g) + "x" + std::to_string(a) + "x" + std::to_string(p) + " has more than " +
             std::to_string(max_nodes) + " nodes");
      nodes = g * a * p;
      links = nodes + g * (a * (a - 1) / 2) + g * (g - 1) / 2;
      max_hops = 5;
      t.class_names_ = {"node", "local", "global"};
      break;
    }
    case TopologyKind::File: break;
  }
  if (links >= kMaxLinks)
    fail(kind + " topology " + dims_text(spec.dims) + " has " + std::to_string(links) +
         " links, more than the 2^32 - 1 that link ids can number");
  if ((spec.hop_latency != 0 && max_hops > kMaxRouteTotal / spec.hop_latency) ||
      (spec.link_per_byte != 0 && max_hops > kMaxRouteTotal / spec.link_per_byte))
    fail("link latency or per-byte time too large: a route of up to " + std::to_string(max_hops) +
         " hops would exceed 2^62 ps (or fs per byte)");
  t.nodes_ = static_cast<std::uint32_t>(nodes);
  t.links_ = static_cast<std::uint32_t>(links);
  return t;
}

Topology Topology::from_network_text(std::string_view name, std::string_view text) {
  Topology t;
  t.kind_ = TopologyKind::File;
  t.file_ = std::string(name);
  const std::string file(name);
  std::uint32_t line_number = 0;
  auto located = [&](std::uint32_t col, const std::string& message) {
    fail(file + ":" + std::to_string(line_number) + ":" + std::to_string(col) + ": error: " + message);
  };
  std::optional<std::uint32_t> nodes, switches;
  std::uint32_t nodes_line = 0, switches_line = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> pair_line;  // vertex pair -> line of its link
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_number;
    if (std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const std::vector<Token> tokens = tokenize(line);
    if (tokens.empty()) continue;
    const std::uint32_t end_col = static_cast<std::uint32_t>(line.size() + 1);
    const std::string_view keyword = tokens[0].text;
    auto no_more_after = [&](std::size_t count) {
      if (tokens.size() > count)
        located(tokens[count].col, "unexpected '" + std::string(tokens[count].text) + "' after the declaration");
    };
    if (keyword == "nodes" || keyword == "switches") {
      const bool is_nodes = keyword == "nodes";
      std::optional<std::uint32_t>& count = is_nodes ? nodes : switches;
      std::uint32_t& first_line = is_nodes ? nodes_line : switches_line;
      if (count)
        located(tokens[0].col,
                "'" + std::string(keyword) + "' is declared twice (first at line " + std::to_string(first_line) + ")");
      if (tokens.size() < 2) located(end_col, "'" + std::string(keyword) + "' wants a count");
      no_more_after(2);
      std::optional<std::uint32_t> value = parse_count(tokens[1].text);
      if (!value) located(tokens[1].col, "bad count '" + std::string(tokens[1].text) + "' (a whole number)");
      const std::uint32_t low = is_nodes ? 1 : 0, high = is_nodes ? kMaxFileNodes : kMaxFileSwitches;
      if (*value < low || *value > high)
        located(tokens[1].col, std::string(is_nodes ? "nodes" : "switches") + " must be " + std::to_string(low) +
                                   " to " + std::to_string(high) + ", got " + std::to_string(*value));
      count = value;
      first_line = line_number;
      continue;
    }
    if (keyword != "link")
      located(tokens[0].col, "unknown declaration '" + std::string(keyword) + "' (nodes, switches, link)");
    if (tokens.size() < 3) located(end_col, "'link' wants two endpoints, then latency and bandwidth");
    std::uint32_t ends[2];
    for (int e = 0; e < 2; ++e) {
      const Token& tok = tokens[1 + e];
      const char prefix = tok.text.empty() ? '\0' : tok.text[0];
      std::optional<std::uint32_t> index =
          (prefix == 'n' || prefix == 's') ? parse_count(tok.text.substr(1)) : std::nullopt;
      if (!index) located(tok.col, "bad endpoint '" + std::string(tok.text) + "' (a node n<i> or a switch s<i>)");
      if (prefix == 'n') {
        if (!nodes) located(tok.col, "unknown node '" + std::string(tok.text) + "' (no 'nodes' declared before it)");
        if (*index >= *nodes)
          located(tok.col,
                  "unknown node '" + std::string(tok.text) + "' (nodes are n0..n" + std::to_string(*nodes - 1) + ")");
        ends[e] = *index;
      } else {
        if (!switches || *switches == 0)
          located(tok.col, "unknown switch '" + std::string(tok.text) + "' (no 'switches' declared before it)");
        if (*index >= *switches)
          located(tok.col, "unknown switch '" + std::string(tok.text) + "' (switches are s0..s" +
                               std::to_string(*switches - 1) + ")");
        ends[e] = kMaxFileNodes + *index;  // renumbered once the node count is final
      }
    }
    if (ends[0] == ends[1]) located(tokens[2].col, "a link from '" + std::string(tokens[1].text) + "' to itself");
    std::optional<double> latency_ps, bytes_per_second;
    std::size_t i = 3;
    while (i < tokens.size()) {
      const Token& key = tokens[i];
      const bool is_latency = key.text == "latency", is_bandwidth = key.text == "bandwidth";
      if (!is_latency && !is_bandwidth)
        located(key.col, "expected 'latency' or 'bandwidth', got '" + std::string(key.text) + "'");
      if ((is_latency && latency_ps) || (is_bandwidth && bytes_per_second))
        located(key.col, "'" + std::string(key.text) + "' is given twice");
      if (i + 1 >= tokens.size()) located(end_col, "'" + std::string(key.text) + "' wants a value");
      const Token& value = tokens[i + 1];
      if (is_latency) {
        latency_ps = parse_quantity(value.text, {{"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}});
        if (!latency_ps)
          located(value.col, "bad latency '" + std::string(value.text) + "' (a number and ns, us, ms or s)");
        if (*latency_ps < 0) located(value.col, "latency must not be negative, got " + std::string(value.text));
        if (std::round(*latency_ps) > static_cast<double>(kMaxFileLinkValue))
          located(value.col, "latency " + std::string(value.text) + " is too large (at most 2^49 ps, about 563 s)");
      } else {
        bytes_per_second = parse_quantity(value.text, {{"B/s", 1},
                                                       {"KB/s", 1e3},
                                                       {"MB/s", 1e6},
                                                       {"GB/s", 1e9},
                                                       {"KiB/s", 1024.0},
                                                       {"MiB/s", 1024.0 * 1024},
                                                       {"GiB/s", 1024.0 * 1024 * 1024}});
        if (!bytes_per_second)
          located(value.col, "bad bandwidth '" + std::string(value.text) +
                                 "' (a number and B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s or GiB/s)");
        if (!(*bytes_per_second > 0))
          located(value.col, "bandwidth must be more than 0, got " + std::string(value.text));
        if (std::round(1e15 / *bytes_per_second) > static_cast<double>(kMaxFileLinkValue))
          located(value.col, "bandwidth " + std::string(value.text) + " is too small (at most 2^49 fs per byte)");
      }
      i += 2;
    }
    if (!latency_ps) located(end_col, "the link has no 'latency'");
    if (!bytes_per_second) located(end_col, "the link has no 'bandwidth'");
    const std::uint64_t key = std::uint64_t{std::min(ends[0], ends[1])} << 32 | std::max(ends[0], ends[1]);
    if (auto [it, inserted] = pair_line.emplace(key, line_number); !inserted)
      located(tokens[1].col, "the link between " + std::string(tokens[1].text) + " and " + std::string(tokens[2].text) +
                                 " is declared twice (first at line " + std::to_string(it->second) + ")");
    if (t.file_links_.size() >= kMaxFileLinks)
      located(tokens[0].col, "more than " + std::to_string(kMaxFileLinks) + " links");
    t.file_links_.push_back({ends[0], ends[1], static_cast<Picoseconds>(std::llround(*latency_ps)),
                             static_cast<FemtosecondsPerByte>(std::llround(1e15 / *bytes_per_second))});
  }
  if (!nodes) fail(file + ": error: no 'nodes' declaration");
  const std::uint32_t n = *nodes, vertices = n + switches.value_or(0);
  for (FileLink& link : t.file_links_)
    for (std::uint32_t* end : {&link.a, &link.b})
      if (*end >= kMaxFileNodes) *end = *end - kMaxFileNodes + n;
  t.nodes_ = n;
  t.switches_ = switches.value_or(0);
  t.links_ = static_cast<std::uint32_t>(t.file_links_.size());
  t.class_names_ = {"node", "switch"};

  // Adjacency in link-id order (compressed rows).
  std::vector<std::uint32_t> first(vertices + 1, 0), adjacent(2 * t.file_links_.size());
  for (const FileLink& link : t.file_links_) ++first[link.a + 1], ++first[link.b + 1];
  for (std::uint32_t v = 0; v < vertices; ++v) first[v + 1] += first[v];
  std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
  for (std::uint32_t id = 0; id < t.links_; ++id) {
    adjacent[fill[t.file_links_[id].a]++] = id;
    adjacent[fill[t.file_links_[id].b]++] = id;
  }
  // A breadth-first search from each destination b gives every vertex's
  // distance to b; a route steps along the lowest-id link that gets one closer.
  constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();
  t.next_link_.assign(std::size_t{n} * vertices, kUnreached);
  std::vector<std::uint32_t> distance(vertices), queue(vertices);
  for (std::uint32_t b = 0; b < n; ++b) {
    std::fill(distance.begin(), distance.end(), kUnreached);
    distance[b] = 0;
    std::size_t head = 0, tail = 0;
    queue[tail++] = b;
    while (head < tail) {
      const std::uint32_t v = queue[head++];
      for (std::uint32_t k = first[v]; k < first[v + 1]; ++k) {
        const FileLink& link = t.file_links_[adjacent[k]];
        const std::uint32_t u = link.a == v ? link.b : link.a;
        if (distance[u] == kUnreached) distance[u] = distance[v] + 1, queue[tail++] = u;
      }
    }
    for (std::uint32_t a = 0; a < n; ++a)
      if (distance[a] == kUnreached)
        fail(file + ": error: nodes n" + std::to_string(std::min(a, b)) + " and n" + std::to_string(std::max(a, b)) +
             " are not connected");
    std::uint32_t* next = &t.next_link_[std::size_t{b} * vertices];
    for (std::uint32_t v = 0; v < vertices; ++v) {
      if (v == b || distance[v] == kUnreached) continue;
      for (std::uint32_t k = first[v]; k < first[v + 1]; ++k) {
        const FileLink& link = t.file_links_[adjacent[k]];
        const std::uint32_t u = link.a == v ? link.b : link.a;
        if (distance[u] + 1 == distance[v]) {
          next[v] = adjacent[k];
          break;
        }
      }
    }
  }
  return t;
}

void Topology::check_node(std::uint32_t id) const {
  if (id >= nodes_)
    throw std::out_of_range("node " + std::to_string(id) + " is not in the topology (" + std::to_string(nodes_) +
                            " nodes)");
}

template <class Visit>
void Topology::walk_file(std::uint32_t a, std::uint32_t b, Visit&& visit) const {
  const std::size_t vertices = nodes_ + switches_;
  const std::uint32_t* next = &next_link_[b * vertices];
  for (std::uint32_t v = a; v != b;) {
    const std::uint32_t id = next[v];
    visit(id);
    v = file_links_[id].a == v ? file_links_[id].b : file_links_[id].a;
  }
}

std::uint32_t Topology::hops(std::uint32_t a, std::uint32_t b) const {
  if (a == b) return 0;
  switch (kind_) {
    case TopologyKind::Complete: return 1;
    case TopologyKind::Ring:
    case TopologyKind::Mesh:
    case TopologyKind::Torus: {
      std::uint32_t d = 0;
      for (std::size_t i = 0; i < dims_.size(); ++i) {
        const std::uint64_t k = dims_[i];
        const std::uint64_t ca = a / strides_[i] % k, cb = b / strides_[i] % k;
        const std::uint64_t diff = ca > cb ? ca - cb : cb - ca;
        d += static_cast<std::uint32_t>(kind_ == TopologyKind::Mesh ? diff : std::min(diff, k - diff));
      }
      return d;
    }
    case TopologyKind::Hypercube: return static_cast<std::uint32_t>(__builtin_popcount(a ^ b));
    case TopologyKind::Tree: {
      const std::uint64_t k = dims_[0];
      if (k == 1) return a > b ? a - b : b - a;  // a chain
      std::uint32_t d = 0;
      std::uint64_t x = a, y = b;
      std::uint32_t dx = tree_depth(x, k), dy = tree_depth(y, k);
      while (dx > dy) x = (x - 1) / k, --dx, ++d;
      while (dy > dx) y = (y - 1) / k, --dy, ++d;
      while (x != y) x = (x - 1) / k, y = (y - 1) / k, d += 2;
      return d;
    }
    case TopologyKind::FatTree: {
      std::uint32_t j = 1;
      while (a / strides_[j] != b / strides_[j]) ++j;
      return 2 * j;
    }
    case TopologyKind::Dragonfly: {
      const std::uint32_t a_per_group = dims_[1], p = dims_[2];
      const std::uint32_t ra = a / p, rb = b / p;
      if (ra == rb) return 2;
      const std::uint32_t ga = ra / a_per_group, gb = rb / a_per_group;
      if (ga == gb) return 3;
      const std::uint32_t gateway_a = ga * a_per_group + gb % a_per_group;
      const std::uint32_t gateway_b = gb * a_per_group + ga % a_per_group;
      return 3 + (ra != gateway_a) + (rb != gateway_b);
    }
    case TopologyKind::File: {
      std::uint32_t d = 0;
      walk_file(a, b, [&](std::uint32_t) { ++d; });
      return d;
    }
  }
  return 0;
}

PathCost Topology::path(std::uint32_t a, std::uint32_t b) const {
  check_node(a);
  check_node(b);
  if (kind_ != TopologyKind::File) return uniform_path(hops(a, b), hop_latency_, link_per_byte_);
  PathCost cost;
  walk_file(a, b, [&](std::uint32_t id) {
    const FileLink& link = file_links_[id];
    ++cost.hops;
    cost.latency_sum += link.latency;
    cost.latency_max = std::max(cost.latency_max, link.latency);
    cost.per_byte_sum += link.per_byte;
    cost.per_byte_max = std::max(cost.per_byte_max, link.per_byte);
  });
  return cost;
}

// Visits the links of the route from a to b in order, each with its
// direction: 0 from the link's first end to its second (the positive way,
// up a tree), 1 the other way.
template <class Visit>
void Topology::walk_route(std::uint32_t a, std::uint32_t b, Visit&& visit) const {
  check_node(a);
  check_node(b);
  if (a == b) return;
  auto push = [&](std::uint64_t id, std::uint32_t dir) { visit(static_cast<std::uint32_t>(id), dir); };
  switch (kind_) {
    case TopologyKind::Complete: push(pair_index(a, b, nodes_), a < b ? 0 : 1); return;
    case TopologyKind::Ring:
    case TopologyKind::Mesh:
    case TopologyKind::Torus: {
      std::uint64_t u = a;
      for (std::size_t i = 0; i < dims_.size(); ++i) {
        const std::uint64_t k = dims_[i], stride = strides_[i];
        std::uint64_t c = u / stride % k;
        const std::uint64_t target = b / stride % k;
        if (kind_ == TopologyKind::Mesh) {
          // Links along a line of k nodes: k-1 of them, the line numbered by the other coordinates.
          const std::uint64_t line = u % stride + stride * (u / (stride * k));
          for (; c < target; ++c) push(offsets_[i] + c + (k - 1) * line, 0);
          for (; c > target; --c) push(offsets_[i] + (c - 1) + (k - 1) * line, 1);
          u = u - (u / stride % k) * stride + target * stride;
          continue;
        }
        const std::uint64_t forward = (target + k - c) % k;
        // A tie (k/2 either way) goes the positive way, except from k/2 to 0, as SimGrid's torus routes.
        const bool positive = forward < k - forward || (forward == k - forward && !(2 * c == k && target == 0));
        for (std::uint64_t step = 0, n = positive ? forward : k - forward; step < n; ++step) {
          const std::uint64_t next_c = positive ? (c + 1) % k : (c + k - 1) % k;
          const std::uint64_t next_u = u - c * stride + next_c * stride;
          push(offsets_[i] + (positive ? u : next_u), positive ? 0 : 1);  // each node owns its positive link
          u = next_u;
          c = next_c;
        }
      }
      return;
    }
    case TopologyKind::Hypercube: {
      const std::uint32_t m = dims_[0];
      std::uint32_t u = a;
      for (std::uint32_t i = 0; i < m; ++i) {
        if (((u ^ b) >> i & 1) == 0) continue;
        const std::uint32_t without_bit = (u & ((1u << i) - 1)) | ((u >> (i + 1)) << i);
        push((std::uint64_t{i} << (m - 1)) + without_bit, u >> i & 1);
        u ^= 1u << i;
      }
      return;
    }
    case TopologyKind::Tree: {
      // Vertex i > 0 owns link i-1 to its parent. Up from a, then b's side reversed.
      const std::uint64_t k = dims_[0];
      auto depth = [&](std::uint64_t v) { return k == 1 ? static_cast<std::uint32_t>(v) : tree_depth(v, k); };
      std::uint64_t x = a, y = b;
      std::uint32_t dx = depth(x), dy = depth(y);
      std::vector<std::uint32_t> down;
      while (dx > dy) push(x - 1, 0), x = (x - 1) / k, --dx;
      while (dy > dx) down.push_back(static_cast<std::uint32_t>(y - 1)), y = (y - 1) / k, --dy;
      while (x != y) {
        push(x - 1, 0), x = (x - 1) / k;
        down.push_back(static_cast<std::uint32_t>(y - 1)), y = (y - 1) / k;
      }
      for (auto it = down.rbegin(); it != down.rend(); ++it) push(*it, 1);
      return;
    }
    case TopologyKind::FatTree: {
      // Level-l switches are numbered w in [0, k^(n-1)); switch w of level l
      // has k up links, to the switches of level l+1 that differ from it in
      // digit l-1 only: link l·k^n + w·k + c leads to w with digit l-1 set to c.
      // Node p's link (id p) goes to switch p/k of level 1.
      const std::uint64_t k = dims_[0], all = strides_.back();
      std::uint32_t j = 1;
      while (a / strides_[j] != b / strides_[j]) ++j;
      push(a, 0);
      std::uint64_t w = a / k;
      for (std::uint32_t l = 1; l < j; ++l) {
        const std::uint64_t c = b / strides_[l - 1] % k;  // d-mod-k: the destination's digit l-1, as SimGrid
        push(l * all + w * k + c, 0);
        w = w - (w / strides_[l - 1] % k) * strides_[l - 1] + c * strides_[l - 1];
      }
      // Down: the child of level l-1 above b has digit l-2 set to b's digit l-1;
      // the link is that child's up link numbered by the digit it had.
      for (std::uint32_t l = j; l > 1; --l) {
        const std::uint64_t had = w / strides_[l - 2] % k,
                            child = w - had * strides_[l - 2] + b / strides_[l - 1] % k * strides_[l - 2];
        push((l - 1) * all + child * k + had, 1);
        w = child;
      }
      push(b, 1);
      return;
    }
    case TopologyKind::Dragonfly: {
      const std::uint64_t g = dims_[0], per_group = dims_[1], p = dims_[2];
      const std::uint64_t local_base = nodes_, global_base = nodes_ + g * (per_group * (per_group - 1) / 2);
      auto local = [&](std::uint64_t r1, std::uint64_t r2) {
        const std::uint64_t group = r1 / per_group;
        return local_base + group * (per_group * (per_group - 1) / 2) +
               pair_index(r1 % per_group, r2 % per_group, per_group);
      };
      const std::uint64_t ra = a / p, rb = b / p, ga = ra / per_group, gb = rb / per_group;
      push(a, 0);
      if (ga == gb) {
        if (ra != rb) push(local(ra, rb), ra < rb ? 0 : 1);
      } else {
        const std::uint64_t gateway_a = ga * per_group + gb % per_group, gateway_b = gb * per_group + ga % per_group;
        if (ra != gateway_a) push(local(ra, gateway_a), ra < gateway_a ? 0 : 1);
        push(global_base + pair_index(ga, gb, g), ga < gb ? 0 : 1);
        if (rb != gateway_b) push(local(gateway_b, rb), gateway_b < rb ? 0 : 1);
      }
      push(b, 1);
      return;
    }
    case TopologyKind::File:
      for (std::uint32_t v = a; v != b;) {
        const std::uint32_t id = next_link_[std::size_t{b} * (nodes_ + switches_) + v];
        const bool forward = file_links_[id].a == v;
        push(id, forward ? 0 : 1);
        v = forward ? file_links_[id].b : file_links_[id].a;
      }
      return;
  }
}

void Topology::route(std::uint32_t a, std::uint32_t b, std::vector<std::uint32_t>& out) const {
  out.clear();
  walk_route(a, b, [&](std::uint32_t id, std::uint32_t) { out.push_back(id); });
}

void Topology::route_directed(std::uint32_t a, std::uint32_t b, std::vector<std::uint32_t>& out) const {
  out.clear();
  walk_route(a, b, [&](std::uint32_t id, std::uint32_t dir) { out.push_back(2 * id + dir); });
}

FemtosecondsPerByte Topology::link_per_byte(std::uint32_t id) const {
  if (id >= links_)
    throw std::out_of_range("link " + std::to_string(id) + " is not in the topology (" + std::to_string(links_) +
                            " links)");
  return kind_ == TopologyKind::File ? file_links_[id].per_byte : link_per_byte_;
}

std::string_view Topology::link_class(std::uint32_t id) const {
  if (id >= links_)
    throw std::out_of_range("link " + std::to_string(id) + " is not in the topology (" + std::to_string(links_) +
                            " links)");
  switch (kind_) {
    case TopologyKind::Complete:
    case TopologyKind::Tree:
    case TopologyKind::Ring: return class_names_[0];
    case TopologyKind::Mesh:
    case TopologyKind::Torus: {
      std::size_t i = offsets_.size() - 1;
      while (offsets_[i] > id) --i;
      return class_names_[i];
    }
    case TopologyKind::Hypercube: return class_names_[id >> (dims_[0] - 1)];
    case TopologyKind::FatTree: return class_names_[id / strides_.back()];
    case TopologyKind::Dragonfly: {
      const std::uint64_t per_group = dims_[1];
      if (id < nodes_) return class_names_[0];
      return class_names_[id < nodes_ + dims_[0] * (per_group * (per_group - 1) / 2) ? 1 : 2];
    }
    case TopologyKind::File: {
      const FileLink& link = file_links_[id];
      return class_names_[link.a < nodes_ || link.b < nodes_ ? 0 : 1];
    }
  }
  return {};
}

std::string Topology::describe() const {
  const std::string n = std::to_string(nodes_) + " nodes";
  switch (kind_) {
    case TopologyKind::Complete: return "complete, " + n + ", direct links";
    case TopologyKind::Ring: return "ring, " + n + ", shorter way round";
    case TopologyKind::Mesh: return "mesh " + dims_text(dims_) + ", " + n + ", dimension-order routing";
    case TopologyKind::Torus: return "torus " + dims_text(dims_) + ", " + n + ", dimension-order routing";
    case TopologyKind::Hypercube:
      return "hypercube of dimension " + std::to_string(dims_[0]) + ", " + n + ", dimension-order routing";
    case TopologyKind::Tree: return std::to_string(dims_[0]) + "-ary tree, " + n + ", up/down routing";
    case TopologyKind::FatTree:
      return "fat tree " + std::to_string(dims_[0]) + "-ary " + std::to_string(dims_[1]) + "-tree, " + n + ", " +
             std::to_string(std::uint64_t{dims_[1]} * (strides_.back() / dims_[0])) + " switches, up/down routing";
    case TopologyKind::Dragonfly:
      return "dragonfly " + std::to_string(dims_[0]) + " groups x " + std::to_string(dims_[1]) + " routers x " +
             std::to_string(dims_[2]) + " nodes, " + n + ", minimal routing";
    case TopologyKind::File:
      return "network file " + file_ + ", " + n + ", " + std::to_string(switches_) + " switches, " +
             std::to_string(links_) + " links, fewest-hop routing";
  }
  return {};
}

}  // namespace poems::components
