// Corrupt OTF2 archives (issue 44): a record that names a rank, communicator
// or region the archive does not define, or a tag or byte count out of its
// range, or time going backwards, is an input error that names the rank, the
// record and the field — never a record dropped with a warning and a
// different result. Files of the archive that are not regular files (a FIFO,
// a device, a directory) are refused before OTF2 opens them.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "../cli/run_command.h"
#include "otf2_test_archive.h"
#include "poems/trace/otf2_read.h"
#include "poems/trace/replay.h"
#include "trace_test_util.h"

namespace poems::trace {
namespace {

namespace fs = std::filesystem;
using testing::ArchiveRecord;
using testing::ArchiveSpec;
using testing::base_archive;
using testing::write_archive;

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("poems_hostile_" + name + "_" + std::to_string(::getpid()));
}

std::string anchor_of(const fs::path& dir) { return (dir / "traces.otf2").string(); }

// The error read_trace gives for the archive `spec`, or "" if it reads.
std::string read_error(const ArchiveSpec& spec, const std::string& name) {
  const fs::path dir = scratch(name);
  write_archive(dir, spec);
  std::string error;
  try {
    read_trace(dir.string());
  } catch (const TraceError& e) {
    error = e.what();
  }
  fs::remove_all(dir);
  return error;
}

// The index of the first record of `kind` on rank r.
std::size_t first(const ArchiveSpec& spec, std::size_t r, ArchiveRecord::Kind kind, std::size_t skip = 0) {
  for (std::size_t i = 0; i < spec.ranks[r].size(); ++i)
    if (spec.ranks[r][i].kind == kind && skip-- == 0) return i;
  ADD_FAILURE() << "no such record";
  return 0;
}

constexpr std::uint32_t kUndefined32 = 0xFFFFFFFFu;

TEST(HostileArchive, TheBaseArchiveReplays) {
  const fs::path dir = scratch("base");
  write_archive(dir, base_archive());
  const Trace t = read_trace(dir.string());
  EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_EQ(t.messages.size(), 3u);
  TraceSchedule schedule(t, {});
  const sim::SimulationResult r = sim::simulate(schedule, testing::machine(5300, 2300, 2000, 2500000, 32768));
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(r.messages, 3u + 1u + 2u);  // and the bcast's and the allreduce's (recursive doubling) on 2 ranks
  fs::remove_all(dir);
}

// Issue 44: a send naming rank 99 (or 2^32-2, or OTF2's undefined value) in a
// 2-rank trace was dropped with a warning and replayed, exit 0.
TEST(HostileArchive, AnUndefinedRankIsAnErrorNamingRankRecordAndField) {
  for (std::uint32_t peer : {2u, 99u, kUndefined32 - 1, kUndefined32}) {
    ArchiveSpec spec = base_archive();
    const std::size_t i = first(spec, 0, ArchiveRecord::Send);
    spec.ranks[0][i].peer = peer;
    const std::string e = read_error(spec, "peer");
    const std::string value = peer == kUndefined32 ? "4294967295 (OTF2's undefined value)" : std::to_string(peer);
    // OTF2 numbers a location's records from 1.
    EXPECT_NE(e.find("traces.otf2: rank 0, event record " + std::to_string(i + 1) +
                     " (MpiSend at time 11): field receiver = " + value +
                     ": not a rank of communicator 'MPI_COMM_WORLD', which has 2 ranks (0 to 1)"),
              std::string::npos)
        << e;
  }
  ArchiveSpec spec = base_archive();  // a receive, and on the reversed communicator
  spec.ranks[1][first(spec, 1, ArchiveRecord::Recv, 1)].peer = 2;
  EXPECT_NE(read_error(spec, "recv")
                .find("rank 1, event record 10 (MpiRecv at time 26): field sender = 2: not a rank "
                      "of communicator 'reversed'"),
            std::string::npos);
  spec = base_archive();  // a nonblocking receive's completion
  spec.ranks[0][first(spec, 0, ArchiveRecord::Irecv)].peer = 99;
  EXPECT_NE(read_error(spec, "irecv").find("(MpiIrecv at time 31): field sender = 99"), std::string::npos);
  spec = base_archive();  // MPI_COMM_SELF has the rank itself, rank 0
  spec.ranks[0][first(spec, 0, ArchiveRecord::Send)].comm = 1;
  spec.ranks[0][first(spec, 0, ArchiveRecord::Send)].peer = 1;
  EXPECT_NE(read_error(spec, "self")
                .find("field receiver = 1: not a rank of communicator 'MPI_COMM_SELF', which has "
                      "1 rank (0)"),
            std::string::npos);
}

TEST(HostileArchive, AnUndefinedCommunicatorIsAnError) {
  for (std::uint32_t comm : {3u, 7u, kUndefined32}) {
    ArchiveSpec spec = base_archive();
    spec.ranks[0][first(spec, 0, ArchiveRecord::Send)].comm = comm;
    const std::string value = comm == kUndefined32 ? "4294967295 (OTF2's undefined value)" : std::to_string(comm);
    EXPECT_NE(read_error(spec, "comm")
                  .find("rank 0, event record 5 (MpiSend at time 11): field communicator = " + value +
                        ": the archive defines no communicator " + value),
              std::string::npos)
        << comm;
  }
  ArchiveSpec spec = base_archive();  // a collective: was left out on one rank, so on both, with a warning
  spec.ranks[1][first(spec, 1, ArchiveRecord::CollectiveEnd)].comm = 7;
  EXPECT_NE(read_error(spec, "collcomm")
                .find("rank 1, event record 14 (MpiCollectiveEnd at time 44): field "
                      "communicator = 7: the archive defines no communicator 7"),
            std::string::npos);
  spec = base_archive();
  spec.ranks[0][first(spec, 0, ArchiveRecord::Irecv)].comm = 9;
  EXPECT_NE(read_error(spec, "irecvcomm").find("(MpiIrecv at time 31): field communicator = 9"), std::string::npos);
}

TEST(HostileArchive, TagsAndSizesAreRangeChecked) {
  ArchiveSpec spec = base_archive();
  spec.ranks[0][first(spec, 0, ArchiveRecord::Send)].tag = 0x80000000u;
  spec.ranks[1][first(spec, 1, ArchiveRecord::Recv)].tag = 0x80000000u;
  EXPECT_NE(read_error(spec, "tag")
                .find("rank 0, event record 5 (MpiSend at time 11): field msgTag = 2147483648: "
                      "outside MPI's tags, 0 to 2147483647 (2^31-1)"),
            std::string::npos);
  spec = base_archive();
  spec.ranks[0][first(spec, 0, ArchiveRecord::Send)].bytes = std::uint64_t{1} << 53;
  spec.ranks[1][first(spec, 1, ArchiveRecord::Recv)].bytes = std::uint64_t{1} << 53;
  EXPECT_NE(read_error(spec, "bytes")
                .find("field msgLength = 9007199254740992: outside the message sizes a trace may "
                      "hold, 0 to 2^53-1 bytes"),
            std::string::npos);
  // The largest of each is in range.
  spec = base_archive();
  for (std::size_t r : {0u, 1u}) {
    ArchiveRecord& e = spec.ranks[r][first(spec, r, r == 0 ? ArchiveRecord::Send : ArchiveRecord::Recv)];
    e.tag = 0x7FFFFFFFu;
    e.bytes = (std::uint64_t{1} << 53) - 1;
  }
  EXPECT_EQ(read_error(spec, "largest"), "");
  spec = base_archive();
  spec.ranks[0][first(spec, 0, ArchiveRecord::CollectiveEnd, 1)].sent = ~std::uint64_t{0};
  EXPECT_NE(read_error(spec, "collbytes")
                .find("(MpiCollectiveEnd at time 55): field sizeSent = 18446744073709551615: "
                      "outside the byte counts a trace may hold, 0 to 2^53-1 bytes"),
            std::string::npos);
}

TEST(HostileArchive, ACollectivesRootAndOperationAreChecked) {
  ArchiveSpec spec = base_archive();
  spec.ranks[1][first(spec, 1, ArchiveRecord::CollectiveEnd)].root = 99;
  EXPECT_NE(read_error(spec, "root")
                .find("rank 1, event record 14 (MpiCollectiveEnd at time 44): field root = 99: "
                      "not a rank of communicator 'MPI_COMM_WORLD'"),
            std::string::npos);
  spec = base_archive();
  spec.ranks[0][first(spec, 0, ArchiveRecord::CollectiveEnd)].root = OTF2_COLLECTIVE_ROOT_NONE;
  EXPECT_NE(read_error(spec, "noroot")
                .find("field root = 4294967295 (OTF2's undefined value): a bcast needs the rank "
                      "of its root"),
            std::string::npos);
  spec = base_archive();
  spec.ranks[0][first(spec, 0, ArchiveRecord::CollectiveEnd)].op = 200;
  EXPECT_NE(read_error(spec, "op").find("field collectiveOp = 200: not a collective operation of OTF2"),
            std::string::npos);
}

TEST(HostileArchive, AnUndefinedRegionIsAnError) {
  ArchiveSpec spec = base_archive();
  spec.ranks[1][first(spec, 1, ArchiveRecord::Enter, 1)].region = 77;
  EXPECT_NE(read_error(spec, "region")
                .find("rank 1, event record 3 (Enter at time 5): field region = 77: the archive "
                      "defines no region 77"),
            std::string::npos);
}

// Issue 44: reversed timestamps gave "the window  ends before it starts".
TEST(HostileArchive, TimeGoingBackwardsIsAnError) {
  ArchiveSpec spec = base_archive();
  std::vector<ArchiveRecord>& r1 = spec.ranks[1];
  for (std::size_t i = 0; i < r1.size(); ++i) r1[i].time = 100 - r1[i].time;  // the whole rank reversed
  EXPECT_NE(read_error(spec, "reversed")
                .find("rank 1, event record 2 (Leave at time 97): field time = 97 is before "
                      "the previous record's time 99 (the timestamps go backwards)"),
            std::string::npos);
  spec = base_archive();  // MPI_Finalize before MPI_Init's end
  spec.ranks[0].back().time = 0;
  EXPECT_NE(read_error(spec, "finalize").find("rank 0, event record 27 (Leave at time 0): field time = 0 is before"),
            std::string::npos);
}

// A hand-made trace whose run ends before it starts names the run (the
// message had an empty window name).
TEST(HostileArchive, ARunThatEndsBeforeItStartsIsNamed) {
  testing::TraceBuilder b(1);
  b.call(0, "MPI_Barrier").collective(Collective::Barrier, 0).end();
  Trace t = b.finish();
  t.ranks[0].begin = 5000;
  t.ranks[0].end = 1000;
  try {
    TraceSchedule schedule(t, {});
    ADD_FAILURE() << "replayed";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()),
              "on rank 0 the run (from the end of MPI_Init, else the first record, to the start of MPI_Finalize, "
              "else the last record) ends before it starts: it starts at 5000 ps and ends at 1000 ps");
  }
}

TEST(HostileArchive, DefinitionsAreChecked) {
  ArchiveSpec spec = base_archive();
  spec.comms[2].members = {1, 1};
  EXPECT_NE(read_error(spec, "dupmember").find("communicator 'reversed' lists rank 1 twice"), std::string::npos);
  spec = base_archive();
  spec.comms[2].members = {1, 5};
  EXPECT_NE(read_error(spec, "member")
                .find("communicator 'reversed' names rank 5, which the archive does not have "
                      "(it has 2 ranks)"),
            std::string::npos);
  spec = base_archive();
  spec.comms[2].group = 12;
  spec.comms[2].define_group = false;
  EXPECT_NE(read_error(spec, "nogroup")
                .find("communicator 'reversed' (2) names group 12, which the archive does not "
                      "define"),
            std::string::npos);
  spec = base_archive();
  spec.locations = {0, 0};
  EXPECT_NE(read_error(spec, "duplocation").find("the MPI ranks' locations group lists location 0 twice"),
            std::string::npos);
}

// Every file OTF2 opens must be a regular file: a FIFO blocked the reader forever.
class NotARegularFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch("files");
    write_archive(dir_, base_archive());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string read_error_with_fifo(const fs::path& file) {
    fs::remove(file);
    EXPECT_EQ(::mkfifo(file.c_str(), 0600), 0);
    // Should the reader open the FIFO, a writer lets it go on (to a wrong
    // result the assertions catch) instead of blocking the test.
    std::atomic<bool> done{false}, finished{false};
    std::thread writer([&] {
      while (!done) {
        const int fd = ::open(file.c_str(), O_WRONLY);
        if (fd >= 0) ::close(fd);
      }
      finished = true;
    });
    std::string error;
    try {
      read_trace(dir_.string());
    } catch (const TraceError& e) {
      error = e.what();
    }
    done = true;
    while (!finished) {  // release the writer's open
      const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK);
      if (fd >= 0) ::close(fd);
      std::this_thread::yield();
    }
    writer.join();
    return error;
  }
  std::string read_error_now() {
    try {
      read_trace(dir_.string());
    } catch (const TraceError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(NotARegularFile, AFifoAsEventFileIsRefused) {
  const fs::path file = dir_ / "traces" / "1.evt";
  EXPECT_EQ(read_error_with_fifo(file), file.string() + ": the event file of rank 1 is a FIFO, not a regular file");
}

TEST_F(NotARegularFile, AFifoAsDefinitionsFileIsRefused) {
  const fs::path local = dir_ / "traces" / "0.def";
  EXPECT_EQ(read_error_with_fifo(local),
            local.string() + ": the local definitions file of rank 0 is a FIFO, not a regular file");
  fs::remove(local);
  write_archive(dir_, base_archive());
  const fs::path global = dir_ / "traces.def";
  EXPECT_EQ(read_error_with_fifo(global),
            global.string() + ": the archive's global definitions file is a FIFO, not a regular file");
}

TEST_F(NotARegularFile, ADirectoryOrADeviceIsRefused) {
  const fs::path file = dir_ / "traces" / "0.evt";
  fs::remove(file);
  fs::create_directory(file);
  EXPECT_EQ(read_error_now(), file.string() + ": the event file of rank 0 is a directory, not a regular file");
  fs::remove(file);
  fs::create_symlink("/dev/zero", file);
  EXPECT_EQ(read_error_now(), file.string() + ": the event file of rank 0 is a character device, not a regular file");
  // A symbolic link to a regular file is read.
  fs::remove(file);
  write_archive(dir_, base_archive());
  fs::rename(file, dir_ / "elsewhere.evt");
  fs::create_symlink(dir_ / "elsewhere.evt", file);
  EXPECT_EQ(read_error_now(), "");
}

// The same through `poems simulate --trace`: exit 1, the message names the
// rank, the record and the field (it was exit 0 with a warning).
TEST(HostileArchive, TheCommandLineExitsOneNamingTheRecord) {
  ArchiveSpec spec = base_archive();
  spec.ranks[0][first(spec, 0, ArchiveRecord::Send)].peer = 99;
  const fs::path dir = scratch("cli");
  write_archive(dir, spec);
  const CommandResult r = run_command(std::string(POEMS_BINARY) + " simulate --no-store --trace " + anchor_of(dir));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("rank 0, event record 5 (MpiSend at time 11): field receiver = 99: not a rank of communicator "
                       "'MPI_COMM_WORLD'"),
            std::string::npos)
      << r.err;
  spec = base_archive();
  spec.ranks[0][first(spec, 0, ArchiveRecord::Send)].tag = 0x80000000u;
  spec.ranks[1][first(spec, 1, ArchiveRecord::Recv)].tag = 0x80000000u;
  write_archive(dir, spec);
  const CommandResult tag = run_command(std::string(POEMS_BINARY) + " trace --info " + dir.string());
  EXPECT_EQ(tag.exit_code, 1) << tag.out << tag.err;
  EXPECT_NE(tag.err.find("field msgTag = 2147483648"), std::string::npos) << tag.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace poems::trace
