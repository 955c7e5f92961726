// Chrome trace event format: "X" (complete) events in microseconds, one
// thread per rank so Perfetto draws one track per process.
#include <cstdio>
#include <ostream>

#include "poems/sim/report.h"

namespace poems::sim {

void write_chrome_trace(std::ostream& out, const SimulationResult& r) {
  static const char* const kNames[] = {"calc", "send", "recv", "rendezvous wait"};
  out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  char line[320];
  for (std::uint32_t rank = 0; rank < r.ranks; ++rank) {
    std::snprintf(
        line, sizeof line,
        "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": %u, \"args\": {\"name\": \"rank %u\"}},\n",
        rank, rank);
    out << line;
  }
  for (const Span& s : r.timeline) {
    std::snprintf(
        line, sizeof line,
        "{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 0, \"tid\": %u, \"ts\": %.6f, \"dur\": %.6f, "
        "\"args\": {\"cpu\": %u, \"peer\": %d, \"bytes\": %llu, \"node\": %u}},\n",
        kNames[s.kind], kNames[s.kind], s.rank, static_cast<double>(s.start) / 1e6,
        static_cast<double>(s.end - s.start) / 1e6, static_cast<unsigned>(s.cpu), s.peer,
        static_cast<unsigned long long>(s.bytes), s.node);
    out << line;
  }
  out << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"poems simulate\"}}\n]}\n";
}

}  // namespace poems::sim
