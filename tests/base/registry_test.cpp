// base::Registry: entries by name, replaced on registering a name again,
// listed by name or in registration order, pointers that stay valid.
#include "poems/base/registry.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using poems::base::known_names;
using poems::base::Registry;
using poems::base::RegistryOrder;

using Names = std::vector<std::string>;

TEST(Registry, FindsWhatWasRegisteredAndNothingElse) {
  Registry<int> r;
  EXPECT_EQ(r.find("a"), nullptr);
  r.add("a", 1);
  ASSERT_NE(r.find("a"), nullptr);
  EXPECT_EQ(*r.find("a"), 1);
  EXPECT_EQ(r.find("A"), nullptr);
  EXPECT_EQ(r.find(""), nullptr);
}

TEST(Registry, ListsByNameByDefaultOrInRegistrationOrder) {
  Registry<int> by_name;
  Registry<int> registered(RegistryOrder::Registration);
  EXPECT_EQ(by_name.names(), Names{});
  EXPECT_EQ(registered.entries(), std::vector<int>{});
  for (Registry<int>* r : {&by_name, &registered}) {
    r->add("simulation[MPI-Sim]", 1);
    r->add("analytic[LogGP]", 2);
    r->add("measurement[mpirun]", 3);
  }
  EXPECT_EQ(by_name.names(), (Names{"analytic[LogGP]", "measurement[mpirun]", "simulation[MPI-Sim]"}));
  EXPECT_EQ(by_name.entries(), (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(registered.names(), (Names{"simulation[MPI-Sim]", "analytic[LogGP]", "measurement[mpirun]"}));
  EXPECT_EQ(registered.entries(), (std::vector<int>{1, 2, 3}));
}

TEST(Registry, RegisteringANameAgainReplacesItsEntryInPlace) {
  for (RegistryOrder order : {RegistryOrder::ByName, RegistryOrder::Registration}) {
    Registry<std::string> r(order);
    r.add("b", "first b");
    r.add("a", "a");
    const std::string* b = r.find("b");
    r.add("b", "second b");
    EXPECT_EQ(r.find("b"), b);  // the same entry, now the second registration
    EXPECT_EQ(*b, "second b");
    const Names expected = order == RegistryOrder::ByName ? Names{"a", "b"} : Names{"b", "a"};
    EXPECT_EQ(r.names(), expected);
    EXPECT_EQ(r.entries().size(), 2u);
  }
}

TEST(Registry, PointersStayValidAsMoreIsRegistered) {
  Registry<std::string> r;
  r.add("m", "the m entry");
  const std::string* m = r.find("m");
  for (int k = 0; k < 5000; ++k) r.add("name" + std::to_string(k), std::string(40, 'x'));
  EXPECT_EQ(r.find("m"), m);
  EXPECT_EQ(*m, "the m entry");
  EXPECT_EQ(r.names().size(), 5001u);
}

TEST(Registry, FirstIsTheFirstInTheListingOrder) {
  Registry<int> by_name;
  Registry<int> registered(RegistryOrder::Registration);
  EXPECT_EQ(by_name.first(), nullptr);
  EXPECT_EQ(registered.first(), nullptr);
  for (Registry<int>* r : {&by_name, &registered}) {
    r->add("sweep3d.kblock", 1);
    r->add("lulesh", 2);
  }
  ASSERT_NE(by_name.first(), nullptr);
  EXPECT_EQ(*by_name.first(), 2);
  ASSERT_NE(registered.first(), nullptr);
  EXPECT_EQ(*registered.first(), 1);
}

TEST(Registry, NamesWhereKeepsTheListingOrder) {
  Registry<int> r;
  r.add("c", 3);
  r.add("a", 1);
  r.add("b", 2);
  r.add("d", 4);
  EXPECT_EQ(r.names_where([](int v) { return v % 2 == 1; }), (Names{"a", "c"}));
  EXPECT_EQ(r.names_where([](int) { return false; }), Names{});
}

TEST(Registry, FindCopyGivesACopyOrNothing) {
  Registry<std::function<int()>> r;
  EXPECT_FALSE(r.find_copy("seven").has_value());
  r.add("seven", [] { return 7; });
  const std::optional<std::function<int()>> f = r.find_copy("seven");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ((*f)(), 7);
  r.add("seven", [] { return 8; });
  EXPECT_EQ((*f)(), 7);  // the copy is the caller's
  EXPECT_EQ((*r.find_copy("seven"))(), 8);
}

TEST(Registry, ThreadsRegisterAndLookUpAtOnce) {
  Registry<int> r;
  constexpr int kThreads = 4, kEach = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&r, t] {
      for (int k = 0; k < kEach; ++k) {
        const std::string name = std::to_string(t) + "." + std::to_string(k);
        r.add(name, k);
        r.add("shared", t);
        const int* mine = r.find(name);
        if (mine == nullptr || *mine != k) throw std::logic_error("lost " + name);  // terminates: the test fails
        (void)r.names();
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(r.names().size(), static_cast<std::size_t>(kThreads * kEach + 1));
  ASSERT_NE(r.find("shared"), nullptr);
  EXPECT_GE(*r.find("shared"), 0);
  EXPECT_LT(*r.find("shared"), kThreads);
}

TEST(KnownNames, ListsTheNamesOrSaysNone) {
  EXPECT_EQ(known_names({}), "none");
  EXPECT_EQ(known_names({}, "none registered"), "none registered");
  EXPECT_EQ(known_names({"processor[external]", "processor[measured]", "processor[wg]"}),
            "processor[external], processor[measured], processor[wg]");
  EXPECT_EQ(known_names({"sweep3d.kblock"}, "none registered"), "sweep3d.kblock");
}

}  // namespace
