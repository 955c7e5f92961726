// The child-process runner (poems/base/child_process.h): exit codes,
// signals, output and its limit, environment, working directory, stdin, a
// program that cannot start, and what the deadline and the keeper kill. Each
// test runs plain and under the keeper unless it is about one of them.
#include "poems/base/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace poems::base {
namespace {

namespace fs = std::filesystem;

// True once `pid` is gone (or a zombie nobody will run again), waiting up to
// 10 s for a signal already sent to take effect.
bool process_gone(pid_t pid) {
  for (int tries = 0; tries < 1000; ++tries) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string field, comm, state;
    if (!(stat >> field >> comm >> state) || state == "Z") return true;
    ::usleep(10000);
  }
  return false;
}

// Whether `pid` is gone now: no waiting.
bool gone_now(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

pid_t first_number(const std::string& text) {
  std::istringstream in(text);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

class ChildProcess : public testing::TestWithParam<bool> {
 protected:
  ChildOptions options(std::vector<std::string> argv) const {
    ChildOptions o;
    o.argv = std::move(argv);
    o.keeper = GetParam();
    return o;
  }
};

TEST_P(ChildProcess, ReportsExitCodeAndOutput) {
  const ChildResult r = run_child(options({"sh", "-c", "echo out; echo err >&2; exit 3"}));
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status_text(), "exit code 3");
  const ChildResult fine = run_child(options({"true"}));
  EXPECT_TRUE(fine.ok());
  EXPECT_EQ(fine.status_text(), "exit code 0");
}

TEST_P(ChildProcess, ReportsTheSignalThatEndedIt) {
  const ChildResult r = run_child(options({"sh", "-c", "kill -TERM $$"}));
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status_text(), "killed by signal 15 (Terminated)");
}

TEST_P(ChildProcess, KeepsOutputUpToItsLimit) {
  ChildOptions o = options({"sh", "-c", "head -c 100000 /dev/zero; head -c 50000 /dev/zero >&2"});
  o.out = ChildStream::capture(1000);
  o.err = ChildStream::capture(10);
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.ok()) << r.status_text();  // the rest was read, not refused: no SIGPIPE
  EXPECT_EQ(r.out, std::string(1000, '\0'));
  EXPECT_EQ(r.err, std::string(10, '\0'));
}

TEST_P(ChildProcess, AProgramNotInPathDoesNotStart) {
  const ChildResult r = run_child(options({"poems-no-such-program"}));
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.start_errno, ENOENT);
  EXPECT_EQ(r.error, "poems-no-such-program: No such file or directory");
  EXPECT_EQ(r.status_text(), "could not start: poems-no-such-program: No such file or directory");
  ChildOptions exact = options({"/nonexistent/program"});
  exact.search_path = false;
  const ChildResult missing = run_child(exact);
  EXPECT_FALSE(missing.started);
  EXPECT_EQ(missing.start_errno, ENOENT);
  EXPECT_EQ(missing.error, "/nonexistent/program: No such file or directory");
  const ChildResult none = run_child(options({}));
  EXPECT_FALSE(none.started);
  EXPECT_EQ(none.error, "no program given");
}

TEST_P(ChildProcess, AnOutputFileThatCannotBeOpenedIsAFailureToStart) {
  ChildOptions o = options({"true"});
  o.out = ChildStream::file("/nonexistent/directory/out.txt");
  const ChildResult r = run_child(o);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.start_errno, ENOENT);
}

TEST_P(ChildProcess, AddsAndReplacesEnvironmentVariables) {
  ::setenv("POEMS_CHILD_TEST_KEPT", "kept", 1);
  ::setenv("POEMS_CHILD_TEST_REPLACED", "old", 1);
  ChildOptions o =
      options({"sh", "-c", "echo $POEMS_CHILD_TEST_KEPT $POEMS_CHILD_TEST_REPLACED $POEMS_CHILD_TEST_NEW"});
  o.environment = {"POEMS_CHILD_TEST_REPLACED=new", "POEMS_CHILD_TEST_NEW=42"};
  const ChildResult r = run_child(o);
  EXPECT_EQ(r.out, "kept new 42\n");
  ChildOptions listed = options({"sh", "-c", "env | grep -c '^POEMS_CHILD_TEST_REPLACED='"});
  listed.environment = o.environment;
  EXPECT_EQ(run_child(listed).out, "1\n");  // replaced, not added twice
  ::unsetenv("POEMS_CHILD_TEST_KEPT");
  ::unsetenv("POEMS_CHILD_TEST_REPLACED");
}

TEST_P(ChildProcess, RunsInItsWorkingDirectory) {
  const fs::path dir = fs::canonical(fs::temp_directory_path());
  ChildOptions o = options({"pwd"});
  o.working_directory = dir.string();
  const ChildResult r = run_child(o);
  EXPECT_EQ(r.out, dir.string() + "\n");
  o.working_directory = "/nonexistent/directory";
  const ChildResult missing = run_child(o);
  EXPECT_FALSE(missing.started);
  EXPECT_EQ(missing.start_errno, ENOENT);
}

TEST_P(ChildProcess, WritesItsInputWhileReadingItsOutput) {
  // More than a pipe holds both ways: written and read together, no deadlock.
  std::string input;
  for (int i = 0; input.size() < (std::size_t{1} << 20); ++i) input += std::to_string(i) + "\n";
  ChildOptions o = options({"cat"});
  o.input = ChildInput::text;
  o.input_text = input;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.ok()) << r.status_text();
  EXPECT_EQ(r.out.size(), input.size());
  EXPECT_TRUE(r.out == input);
  // A child that never reads: EPIPE here, not a dead test.
  ChildOptions ignores = options({"true"});
  ignores.input = ChildInput::text;
  ignores.input_text = input;
  EXPECT_TRUE(run_child(ignores).ok());
  // The default stdin is /dev/null.
  EXPECT_EQ(run_child(options({"wc", "-c"})).out, "0\n");
}

TEST_P(ChildProcess, SendsOutputToFilesOrToStderr) {
  const fs::path file = fs::temp_directory_path() / ("poems_child_test_" + std::to_string(::getpid()) + ".txt");
  ChildOptions o = options({"sh", "-c", "echo to the file; echo to stderr >&2"});
  o.out = ChildStream::file(file.string());
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.ok()) << r.status_text();
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "to stderr\n");
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "to the file\n");
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  fs::remove(file);
  ChildOptions joined = options({"sh", "-c", "echo one; echo two >&2"});
  joined.out = ChildStream::to_stderr();
  const ChildResult j = run_child(joined);
  EXPECT_EQ(j.out, "");
  EXPECT_EQ(j.err, "one\ntwo\n");
}

TEST_P(ChildProcess, KillsItsProcessGroupAtTheDeadline) {
  ChildOptions o = options({"sh", "-c", "sleep 30 & echo $!; sleep 30; echo never"});
  o.own_process_group = true;
  o.timeout_seconds = 0.3;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status_text().rfind("timed out after ", 0), 0u) << r.status_text();
  const pid_t sleeper = first_number(r.out);
  ASSERT_GT(sleeper, 0) << r.out;
  EXPECT_EQ(r.out, std::to_string(sleeper) + "\n");
  EXPECT_TRUE(process_gone(sleeper)) << "the background sleep " << sleeper << " survived the deadline";
}

INSTANTIATE_TEST_SUITE_P(Modes, ChildProcess, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "Keeper" : "Plain"; });

TEST(ChildProcessPlain, SendsSigkillWhenSigtermIsIgnored) {
  ChildOptions o;
  o.argv = {"sh", "-c", "trap '' TERM; sleep 30"};  // the ignored SIGTERM is inherited by sleep
  o.own_process_group = true;
  o.timeout_seconds = 0.2;
  o.kill_grace_seconds = 0.2;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(ChildProcessPlain, WithoutItsOwnGroupOnlyTheChildIsSignalled) {
  ChildOptions o;
  o.argv = {"sh", "-c", "sleep 30 & echo $!; wait"};
  o.timeout_seconds = 0.2;
  o.kill_grace_seconds = 0;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  const pid_t sleeper = first_number(r.out);
  ASSERT_GT(sleeper, 0) << r.out;
  EXPECT_FALSE(gone_now(sleeper)) << "the background sleep was in our group: it should have been left alone";
  ::kill(sleeper, SIGKILL);
}

TEST(ChildProcessPlain, ASetsidGrandchildOutlivesAGroupKill) {
  // Why the keeper exists: setsid leaves the group.
  ChildOptions o;
  o.argv = {"sh", "-c", "setsid sleep 30 & echo $!; sleep 30"};
  o.own_process_group = true;
  o.timeout_seconds = 0.2;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.timed_out);
  const pid_t sleeper = first_number(r.out);
  ASSERT_GT(sleeper, 0) << r.out;
  EXPECT_FALSE(gone_now(sleeper));
  ::kill(sleeper, SIGKILL);
}

TEST(ChildProcessKeeper, KillsASetsidGrandchildAtTheDeadline) {
  ChildOptions o;
  o.argv = {"sh", "-c", "setsid sleep 30 & echo $!; sleep 30"};
  o.keeper = true;
  o.own_process_group = true;
  o.timeout_seconds = 0.3;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, 0);
  const pid_t sleeper = first_number(r.out);
  ASSERT_GT(sleeper, 0) << r.out;
  EXPECT_TRUE(gone_now(sleeper)) << "setsid sleep " << sleeper << " survived the deadline";
  EXPECT_GE(r.killed.count, 2);  // the shell and the sleeper (the shell's sleep too, with the group)
}

TEST(ChildProcessKeeper, KillsAndNamesWhatTheChildLeftBehind) {
  // The shell exits once the setsid'd sleep runs; the keeper finds it (in a
  // session of its own, reparented to the keeper), kills it and names it.
  ChildOptions o;
  o.argv = {"sh", "-c", "setsid sleep 30 & until [ \"$(cat /proc/$!/comm)\" = sleep ]; do :; done; echo $!"};
  o.keeper = true;
  o.own_process_group = false;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.ok()) << r.status_text();
  const pid_t sleeper = first_number(r.out);
  ASSERT_GT(sleeper, 0) << r.out;
  EXPECT_TRUE(gone_now(sleeper));
  ASSERT_EQ(r.killed.count, 1);
  ASSERT_EQ(r.killed.stored, 1);
  EXPECT_EQ(r.killed.first[0].pid, sleeper);
  EXPECT_STREQ(r.killed.first[0].name, "sleep");
}

TEST(ChildProcessKeeper, PassesTheCallersSignalMaskUnlessReset) {
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &old), 0);
  // SigBlk in /proc/self/status: SIGUSR1 (10) is bit 9, 0x200.
  for (bool keeper : {false, true}) {
    ChildOptions o;
    o.argv = {"sh", "-c", "grep '^SigBlk' /proc/self/status | cut -f2"};
    o.keeper = keeper;
    o.reset_signals = false;
    EXPECT_EQ(run_child(o).out, "0000000000000200\n") << (keeper ? "keeper" : "plain");
    o.reset_signals = true;
    EXPECT_EQ(run_child(o).out, "0000000000000000\n") << (keeper ? "keeper" : "plain");
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace
}  // namespace poems::base
