// End-to-end: the MPI runtime's `eager_limit` and `handshake` profile
// attributes. Absent, the network's S rules (examples/sweep3d/mpi.psl has
// none, so a calibrated machine keeps its S); present in any profile the
// communication is bound through, they override it; two profiles that
// disagree, or a value of the wrong kind, are located PSL errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_command.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace eager_limit_setting_tests {

namespace {

// 2x2 ranks of 20x20 cells, 8 angles: 160-byte messages, eager under Odin's
// S = 32768 B, rendezvous under S = 64 B.
const std::string kBinding =
    " --machine Odin --set npe_i=2 --set npe_j=2 --set it_g=40 --set jt_g=40 --set kt=8 --set mk=1 --set mmi=1"
    " --set mm=6 --set iterations=1 --set 'compute=processor[wg]' --no-store --format json";

// A copy of the Sweep3D example whose mpi.psl has `edit` applied to every
// send profile (the one that carries `handshake = false;`) and `recv_edit`
// to every recv profile.
std::string example_copy(const std::string& name, const std::string& edit, const std::string& recv_edit = {}) {
  const fs::path dir = fs::temp_directory_path() / ("poems_eager_limit_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(dir);
  for (const char* f : {"sweep3d.psl", "machines.psl", "mpi.psl"})
    fs::copy_file(fs::path(POEMS_SOURCE_DIR) / "examples/sweep3d" / f, dir / f, fs::copy_options::overwrite_existing);
  std::string mpi = read_text(dir / "mpi.psl");
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (std::size_t at = mpi.find(from); at != std::string::npos; at = mpi.find(from, at + to.size()))
      mpi.replace(at, from.size(), to);
  };
  if (!edit.empty()) replace_all(" handshake = false;", " " + edit + " handshake = false;");
  if (!recv_edit.empty()) {
    for (const char* paradigm : {"analytic[LogGP]", "simulation[MPI-Sim]", "simulation[direct]"}) {
      const std::string from = std::string("evaluation = ") + paradigm + "; }\n    transaction mpi_recv";
      replace_all(from, std::string("evaluation = ") + paradigm + "; " + recv_edit + " }\n    transaction mpi_recv");
    }
  }
  std::ofstream(dir / "mpi.psl") << mpi;
  return (dir / "sweep3d.psl").string();
}

double time_of(const CommandResult& r, const char* field) { return nlohmann::json::parse(r.out)[field].get<double>(); }

}  // namespace

// eager_limit = 64B in the runtime gives exactly what S = 64 B on the network
// gives, in the simulator and in the closed form, and not what S = 32768 B gives.
TEST(EagerLimitSetting, OverridesTheNetworksSAsIfSWereThatValue) {
  const std::string plain = example_copy("plain", "");
  const std::string limited = example_copy("limited", "eager_limit = 64B;");
  for (const auto& [command, field] : {std::pair{"simulate", "finish_ns"}, std::pair{"analyze", "time_ns"}}) {
    CommandResult base = poems_in_process(std::string(command) + " " + plain + kBinding);
    CommandResult s64 = poems_in_process(std::string(command) + " " + plain + kBinding + " --set Odin.S=64B");
    CommandResult eager = poems_in_process(std::string(command) + " " + limited + kBinding);
    ASSERT_EQ(base.exit_code, 0) << base.err;
    ASSERT_EQ(s64.exit_code, 0) << s64.err;
    ASSERT_EQ(eager.exit_code, 0) << eager.err;
    EXPECT_EQ(time_of(eager, field), time_of(s64, field)) << command;
    EXPECT_GT(time_of(eager, field), time_of(base, field)) << command << ": rendezvous must cost more";
  }
  // The runtime's setting wins over the network's S, whatever S is.
  CommandResult both = poems_in_process("simulate " + limited + kBinding + " --set Odin.S=1MiB");
  CommandResult s64 = poems_in_process("simulate " + plain + kBinding + " --set Odin.S=64B");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(time_of(both, "finish_ns"), time_of(s64, "finish_ns"));
}

// The same value in the recv profile too is no conflict; a different one is
// an error located at the value met second (nodes in order: Sweep3D's first
// communication node is a receive).
TEST(EagerLimitSetting, ProfilesThatDisagreeAreALocatedError) {
  const std::string same = example_copy("same", "eager_limit = 64B;", "eager_limit = 64B;");
  CommandResult agree = poems_in_process("simulate " + same + kBinding);
  EXPECT_EQ(agree.exit_code, 0) << agree.err;

  const std::string differ = example_copy("differ", "eager_limit = 64B;", "eager_limit = 128B;");
  CommandResult r = poems_in_process("simulate " + differ + kBinding);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("mpi.psl:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": error: MPI_simulated (accepts): eager_limit = 64B disagrees with eager_limit = 128B in "
                       "MPI_simulated (recv)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("^"), std::string::npos) << r.err;

  const std::string handshake = example_copy("handshake", "", "handshake = true;");
  CommandResult h = poems_in_process("analyze " + handshake + kBinding);
  EXPECT_EQ(h.exit_code, 1) << h.err;
  EXPECT_NE(
      h.err.find("MPI_analytic (accepts): handshake = false disagrees with handshake = true in MPI_analytic (recv)"),
      std::string::npos)
      << h.err;
}

// A value that is not a byte count (or not a boolean) is refused where it is
// written, never ignored.
TEST(EagerLimitSetting, AValueOfTheWrongKindIsALocatedError) {
  const std::string text = example_copy("text", "eager_limit = \"big\";");
  CommandResult r = poems_in_process("simulate " + text + kBinding);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: MPI_simulated (accepts): eager_limit = \"big\" is not an eager limit; it must be a "
                       "whole number of bytes from 0 to 9e15, e.g. 4096B"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("mpi.psl:"), std::string::npos) << r.err;

  const std::string time = example_copy("time", "eager_limit = 5us;");
  EXPECT_EQ(poems_in_process("analyze " + time + kBinding).exit_code, 1);

  const std::string flag = example_copy("flag", "", "handshake = 1;");
  CommandResult h = poems_in_process("simulate " + flag + kBinding);
  EXPECT_EQ(h.exit_code, 1) << h.err;
  EXPECT_NE(h.err.find("handshake = 1 is not a rendezvous handshake setting; it must be true or false"),
            std::string::npos)
      << h.err;
}

// A measured MPI library uses its own eager limit: one written on a runtime
// whose communication reaches no network model would be ignored, so it is
// refused where it is written.
TEST(EagerLimitSetting, WithoutANetworkItIsALocatedError) {
  const std::string spec = example_copy("measured", "");
  const std::string mpi_path = (std::filesystem::path(spec).parent_path() / "mpi.psl").string();
  std::string mpi = read_text(mpi_path);
  const std::string profile = "evaluation = measurement[mpirun]; library = \"Open MPI\";";
  const std::size_t at = mpi.find(profile);
  ASSERT_NE(at, std::string::npos);
  mpi.insert(at + profile.size(), " eager_limit = 64B;");
  std::ofstream(mpi_path) << mpi;
  CommandResult r = poems_in_process("compile " + spec + " --paradigm 'measurement[mpirun]'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("mpi.psl:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error: MPI_measured (accepts): eager_limit = 64B has no network to apply to"),
            std::string::npos)
      << r.err;
}

}  // namespace eager_limit_setting_tests
