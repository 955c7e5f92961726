// poems_loggops_bench: the MPI micro-benchmarks behind `poems calibrate`
// (docs/sweep3d.md). Ranks 0 (client) and 1 (server) measure, per message
// size s, with blocking MPI_Send/MPI_Recv as wavefront codes use them:
//
//   echo       ping-pong round trip / 2                       (the CoMet thesis, 3.3.1)
//   exchange   both send, then both receive (MPI_Sendrecv)     (the CoMet thesis, 3.3.2)
//   RTT_1^0    one message and a zero-byte acknowledgement     (the LogGOPSim paper, 1.3)
//   RTT_n^0    n messages back to back, then the acknowledgement
//   RTT_n^d    n messages with a delay d between transmissions, then the acknowledgement
//
// and the eager limit S: the largest size whose blocking send completes
// while the receiver has not posted its receive yet. Timings are medians of
// repeated trials (MPI_Wtime). Output: one line
//   POEMS_LOGGOPS {"sizes": [...], "echo_ns": [...], ...}
// that poems::measure::parse_loggops_output reads. Other ranks only wait.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr long kLargestProbe = 1l << 20;  // the eager-limit probe goes up to 1 MiB

struct Options {
  bool quick = false;
  std::vector<long> sizes;
};

void spin(double seconds) {
  const double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

class Bench {
 public:
  Bench(int rank, const Options& o) : rank_(rank) {
    long largest = kLargestProbe;
    for (long s : o.sizes) largest = std::max(largest, s);
    buffer_.assign(static_cast<std::size_t>(largest), 'x');
  }

  // Half the round trip of one message of s bytes each way.
  double echo(long s, int trials) {
    std::vector<double> t;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < trials + 2; ++k) {
      const double start = MPI_Wtime();
      if (rank_ == 0) {
        MPI_Send(buffer_.data(), static_cast<int>(s), MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buffer_.data(), static_cast<int>(s), MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank_ == 1) {
        MPI_Recv(buffer_.data(), static_cast<int>(s), MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer_.data(), static_cast<int>(s), MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
      if (k >= 2) t.push_back((MPI_Wtime() - start) / 2);  // two warm-up trials
    }
    return median(t);
  }

  // Both send s bytes to each other at once.
  double exchange(long s, int trials) {
    std::vector<double> t;
    std::vector<char> in(buffer_.size());
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < trials + 2; ++k) {
      const double start = MPI_Wtime();
      if (rank_ <= 1)
        MPI_Sendrecv(buffer_.data(), static_cast<int>(s), MPI_CHAR, 1 - rank_, 2, in.data(), static_cast<int>(s),
                     MPI_CHAR, 1 - rank_, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (k >= 2) t.push_back(MPI_Wtime() - start);
    }
    return median(t);
  }

  // RTT_n^d: n messages of s bytes, `delay` seconds apart, then a 0-byte ack.
  double train(long s, int n, double delay, int trials) {
    std::vector<double> t;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < trials + 2; ++k) {
      double start = 0;
      if (rank_ == 0) {
        start = MPI_Wtime();
        for (int m = 0; m < n; ++m) {
          MPI_Send(buffer_.data(), static_cast<int>(s), MPI_CHAR, 1, 3, MPI_COMM_WORLD);
          if (m + 1 < n && delay > 0) spin(delay);
        }
        MPI_Recv(nullptr, 0, MPI_CHAR, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (k >= 2) t.push_back(MPI_Wtime() - start);
      } else if (rank_ == 1) {
        for (int m = 0; m < n; ++m)
          MPI_Recv(buffer_.data(), static_cast<int>(s), MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(nullptr, 0, MPI_CHAR, 0, 4, MPI_COMM_WORLD);
      }
      // The server must be back at its first receive before the next trial.
      MPI_Barrier(MPI_COMM_WORLD);
    }
    return median(t);
  }

  // How long a blocking send of s bytes takes while the receiver posts its
  // receive only `wait` seconds later (the median of `trials`: Open MPI's
  // shared-memory transport completes some sends of a few hundred bytes
  // early and makes others wait, so the typical behaviour decides).
  double unposted_send(long s, double wait, int trials) {
    std::vector<double> t;
    for (int k = 0; k < trials; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank_ == 0) {
        const double start = MPI_Wtime();
        MPI_Send(buffer_.data(), static_cast<int>(s), MPI_CHAR, 1, 5, MPI_COMM_WORLD);
        t.push_back(MPI_Wtime() - start);
      } else if (rank_ == 1) {
        spin(wait);
        MPI_Recv(buffer_.data(), static_cast<int>(s), MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    return median(t);
  }

 private:
  int rank_;
  std::vector<char> buffer_;
};

std::string json_array(const std::vector<double>& v, double scale) {
  std::string s = "[";
  char buffer[40];
  for (std::size_t k = 0; k < v.size(); ++k) {
    std::snprintf(buffer, sizeof buffer, "%s%.6f", k ? ", " : "", v[k] * scale);
    s += buffer;
  }
  return s + "]";
}

bool parse_options(int argc, char** argv, Options& o, std::string& error) {
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--sizes" && k + 1 < argc) {
      std::string list = argv[++k];
      std::size_t at = 0;
      while (at <= list.size()) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string item = list.substr(at, comma - at);
        char* end = nullptr;
        const long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1 || v > (64l << 20)) {
          error = "--sizes: '" + item + "' is not a size from 1 to 67108864 bytes";
          return false;
        }
        o.sizes.push_back(v);
        at = comma + 1;
      }
    } else {
      error = "unknown argument '" + a + "' (usage: poems_loggops_bench [--quick] [--sizes 8,1024,...])";
      return false;
    }
  }
  if (o.sizes.empty())
    o.sizes = o.quick ? std::vector<long>{8, 256, 1024, 4096, 16384, 65536, 262144}
                      : std::vector<long>{8, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144};
  std::sort(o.sizes.begin(), o.sizes.end());
  o.sizes.erase(std::unique(o.sizes.begin(), o.sizes.end()), o.sizes.end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options o;
  std::string error;
  if (!parse_options(argc, argv, o, error) || ranks < 2) {
    if (rank == 0)
      std::fprintf(stderr, "poems_loggops_bench: error: %s\n",
                   error.empty() ? "needs at least 2 MPI processes (mpirun -np 2)" : error.c_str());
    MPI_Finalize();
    return 2;
  }
  Bench bench(rank, o);
  const int n = 16;  // messages per train
  std::vector<double> echo, exchange, rtt1, train0, delay, traind;
  for (long s : o.sizes) {
    const int trials = o.quick ? (s > 65536 ? 8 : 30) : (s > 65536 ? 30 : 200);
    // A train's overhead is a difference of two medians: with 5 trials one
    // descheduling on a shared host moved o by 5 µs at one size and the
    // quick fit to o = 0. 20 trials (as the full mode) cost under 0.5 s.
    const int train_trials = 20;
    echo.push_back(bench.echo(s, trials));
    exchange.push_back(bench.exchange(s, trials));
    rtt1.push_back(bench.train(s, 1, 0, train_trials));
    train0.push_back(bench.train(s, n, 0, train_trials));
    // d > s·G + g: twice the back-to-back time per message, at least 2 µs.
    double d = std::max(2e-6, 2 * (train0.back() - rtt1.back()) / (n - 1));
    MPI_Bcast(&d, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    delay.push_back(d);
    traind.push_back(bench.train(s, n, d, train_trials));
  }
  // Eager limit: powers of two from 256 B to 1 MiB.
  const double wait = 2e-3;
  std::vector<double> probe_sizes, probe_times;
  long eager_limit = 0;
  bool still_eager = true;
  for (long s = 256; s <= kLargestProbe; s *= 2) {
    const double t = bench.unposted_send(s, wait, o.quick ? 3 : 5);
    probe_sizes.push_back(static_cast<double>(s));
    probe_times.push_back(t);
    if (still_eager && t < wait / 2)
      eager_limit = s;
    else
      still_eager = false;
  }
  if (rank == 0) {
    std::vector<double> sizes(o.sizes.begin(), o.sizes.end());
    std::printf(
        "POEMS_LOGGOPS {\"ranks\": %d, \"train_messages\": %d, \"quick\": %s, \"sizes\": %s, \"echo_ns\": %s, "
        "\"exchange_ns\": %s, \"rtt1_ns\": %s, \"train_ns\": %s, \"delay_ns\": %s, \"train_delay_ns\": %s, "
        "\"eager_probe_sizes\": %s, \"eager_probe_ns\": %s, \"eager_probe_wait_ns\": %.0f, \"eager_limit\": %ld}\n",
        ranks, n, o.quick ? "true" : "false", json_array(sizes, 1).c_str(), json_array(echo, 1e9).c_str(),
        json_array(exchange, 1e9).c_str(), json_array(rtt1, 1e9).c_str(), json_array(train0, 1e9).c_str(),
        json_array(delay, 1e9).c_str(), json_array(traind, 1e9).c_str(), json_array(probe_sizes, 1).c_str(),
        json_array(probe_times, 1e9).c_str(), wait * 1e9, eager_limit);
  }
  MPI_Finalize();
  return 0;
}
