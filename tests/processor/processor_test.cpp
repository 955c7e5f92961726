// The processor-model hook (evaluators/processor) and the Sweep3D k-block
// kernel (examples/sweep3d/kernel): real values, real kernel runs, real
// external commands (scripts written into a temporary directory).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "poems/processor/measured.h"
#include "poems/processor/processor_model.h"
#include "poems/sweep3d/kblock.h"
#include "processor_error.h"

using namespace poems;
using processor::ProcessorError;
using processor::ProcessorSpec;
using processor::TaskRequest;
using processor::testing::error_of;

namespace {

TaskRequest kblock_task(double cells, double angles) {
  return TaskRequest{"KBlock", "execute_code_block", {{"work", cells * angles}, {"cells", cells}, {"angles", angles}}};
}

// ---------------------------------------------------------------- registry

TEST(ProcessorRegistry, BuiltinsAreRegisteredAndSorted) {
  const auto names = processor::processor_models();
  for (const char* name : {"processor[wg]", "processor[measured]", "processor[external]"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(ProcessorRegistry, UnknownEvaluatorListsTheKnownOnes) {
  const auto msg = error_of([] { processor::make_processor_model({"Opteron", "processor[gem5]", {}, {}}); });
  EXPECT_NE(msg.find("'Opteron'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown processor evaluator 'processor[gem5]'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("processor[external], processor[hierarchy], processor[measured], processor[wg]"),
            std::string::npos)
      << msg;
}

TEST(ProcessorRegistry, AModelIsOneRegistration) {
  struct Constant : processor::ProcessorModel {
    double t;
    explicit Constant(double t) : t(t) {}
    std::string evaluator() const override { return "processor[test-constant]"; }
    double task_time_ns(const TaskRequest&) override { return t; }
  };
  processor::register_processor_model("processor[test-constant]", [](const ProcessorSpec& spec) {
    return std::make_unique<Constant>(spec.numbers.at("t"));
  });
  auto model = processor::make_processor_model({"Cpu", "processor[test-constant]", {{"t", 42}}, {}});
  EXPECT_EQ(model->task_time_ns(kblock_task(10, 2)), 42);
  const auto names = processor::processor_models();
  EXPECT_NE(std::find(names.begin(), names.end(), "processor[test-constant]"), names.end());
}

// ---------------------------------------------------------------- processor[wg]

TEST(ProcessorWg, TimeIsWorkTimesWg) {
  auto model = processor::make_processor_model({"Opteron", "processor[wg]", {{"Wg", 60}}, {}});
  EXPECT_EQ(model->evaluator(), "processor[wg]");
  const double cells = 75.0 * 50 * 10, angles = 3;  // Sweep3D 150x150, 2x3, mk = 10, mmi = 3
  EXPECT_EQ(model->task_time_ns(kblock_task(cells, angles)), cells * angles * 60.0);
  EXPECT_EQ(model->task_time_ns(kblock_task(0, 3)), 0.0);
  auto odd = processor::make_processor_model({"Cpu", "processor[wg]", {{"Wg", 0.37}}, {}});
  EXPECT_EQ(odd->task_time_ns(TaskRequest{"K", "t", {{"work", 12345.0}}}), 12345.0 * 0.37);
  EXPECT_EQ(processor::fitted_wg_ns(*model, kblock_task(cells, angles)), 60.0);
}

TEST(ProcessorWg, MissingOrNegativeWgIsNamedWithAnExample) {
  auto msg = error_of([] { processor::make_processor_model({"Opteron", "processor[wg]", {}, {}}); });
  EXPECT_NE(msg.find("'Opteron'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("processor[wg]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing attribute 'Wg'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("param Wg = 60ns;"), std::string::npos) << msg;
  msg = error_of([] { processor::make_processor_model({"Opteron", "processor[wg]", {{"Wg", -5}}, {}}); });
  EXPECT_NE(msg.find("'Wg' is -5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("param Wg = 60ns;"), std::string::npos) << msg;
}

TEST(ProcessorWg, TaskWithoutWorkIsAnError) {
  auto model = processor::make_processor_model({"Opteron", "processor[wg]", {{"Wg", 60}}, {}});
  const auto msg = error_of([&] { model->task_time_ns(TaskRequest{"KBlock", "execute_code_block", {{"cells", 1}}}); });
  EXPECT_NE(msg.find("KBlock.execute_code_block has no parameter 'work'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'Opteron' (processor[wg])"), std::string::npos) << msg;
}

TEST(ProcessorWg, WorkBeyondTheClockOrNegativeIsRefused) {
  // The reproducers of issue 25: work 1e15, 2^63 - 1 and -10 once became 0 ns of compute.
  auto model = processor::make_processor_model({"Opteron", "processor[wg]", {{"Wg", 60}}, {}});
  for (double work : {1e15, 9223372036854775807.0}) {
    const auto msg = error_of([&] { model->task_time_ns(TaskRequest{"K", "t", {{"work", work}}}); });
    EXPECT_NE(msg.find("one task may take at most 2^60 ps"), std::string::npos) << msg;
  }
  auto msg = error_of([&] { model->task_time_ns(TaskRequest{"K", "t", {{"work", -10}}}); });
  EXPECT_NE(msg.find("has work = -10; work must be a finite number >= 0"), std::string::npos) << msg;
  // Just below the bound is a time: 2^60 ps = 1152921504606846.976 ns.
  EXPECT_EQ(model->task_time_ns(TaskRequest{"K", "t", {{"work", 19215358410114.0}}}), 19215358410114.0 * 60);
}

// ---------------------------------------------------------------- the k-block kernel

// Random block: cross sections, sources, inflows, cell widths.
void randomize(sweep3d::KBlockState& s, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.2, 3.0);
  s.dx = u(rng), s.dy = u(rng), s.dz = u(rng);
  for (auto& v : s.sigt) v = u(rng);
  for (auto& v : s.source) v = u(rng);
  for (auto* face : {&s.face_i, &s.face_j, &s.face_k})
    for (auto& v : *face) v = u(rng);
  std::fill(s.flux.begin(), s.flux.end(), 0.0);
}

// Particle balance of the whole block, which the DD equations (with or
// without fixup) give exactly: summing σt·psi + Σ (c/2)(out − in) = s over
// the cells of a row telescopes the interior faces, so
//   Σ_cells Σ_m w (s − σt·psi) = Σ_m w [(cx/2) Σ(face_i' − face_i) + (cy/2) Σ(...) + (cz/2) Σ(...)].
// Returns {left, right}.
std::pair<double, double> balance(const sweep3d::KBlockState& before, const sweep3d::KBlockState& after) {
  const auto sh = after.shape();
  double wsum = 0;
  for (const auto& o : after.ordinates) wsum += o.w;
  double left = 0;
  for (std::size_t c = 0; c < sh.cells(); ++c) left += wsum * after.source[c] - after.sigt[c] * after.flux[c];
  double right = 0;
  for (int m = 0; m < sh.angles; ++m) {
    const auto& o = after.ordinates[static_cast<std::size_t>(m)];
    double di = 0, dj = 0, dk = 0;
    for (int k = 0; k < sh.mk; ++k)
      for (int j = 0; j < sh.jt; ++j)
        di += after.face_i[after.face_i_index(j, k, m)] - before.face_i[after.face_i_index(j, k, m)];
    for (int k = 0; k < sh.mk; ++k)
      for (int i = 0; i < sh.it; ++i)
        dj += after.face_j[after.face_j_index(i, k, m)] - before.face_j[after.face_j_index(i, k, m)];
    for (int j = 0; j < sh.jt; ++j)
      for (int i = 0; i < sh.it; ++i)
        dk += after.face_k[after.face_k_index(i, j, m)] - before.face_k[after.face_k_index(i, j, m)];
    right += o.w * (o.mu / after.dx * di + o.eta / after.dy * dj + o.xi / after.dz * dk);
  }
  return {left, right};
}

TEST(KBlockKernel, ZeroSourceAndVacuumInflowGiveZeroFlux) {
  sweep3d::KBlockState s({7, 5, 4, 3});
  std::fill(s.source.begin(), s.source.end(), 0.0);
  for (int d = 0; d < 8; ++d) {
    const auto counts = sweep3d::sweep_kblock(s, {d & 1 ? 1 : -1, d & 2 ? 1 : -1, d & 4 ? 1 : -1});
    EXPECT_EQ(counts.cell_angles, 7u * 5 * 4 * 3);
  }
  for (double f : s.flux) EXPECT_EQ(f, 0.0);
  for (auto* face : {&s.face_i, &s.face_j, &s.face_k})
    for (double v : *face) EXPECT_EQ(v, 0.0);
}

// The infinite-medium solution psi = s/σt is a fixed point of the DD step:
// with s = c·σt in every cell and inflow c on every face, psi = c in every
// cell ((c·σt + c·Σc_x) / (σt + Σc_x) = c), every outflow is 2c − c = c, and
// the flux is c·Σw — whatever the cross sections, widths or angles.
TEST(KBlockKernel, InfiniteMediumSolutionIsReproducedExactly) {
  std::mt19937_64 rng(7);
  sweep3d::KBlockState s({9, 6, 5, 6});
  randomize(s, rng);
  const double c = 1.75;
  for (std::size_t i = 0; i < s.sigt.size(); ++i) s.source[i] = c * s.sigt[i];
  for (auto* face : {&s.face_i, &s.face_j, &s.face_k}) std::fill(face->begin(), face->end(), c);
  sweep3d::sweep_kblock(s, {-1, 1, -1});
  double wsum = 0;
  for (const auto& o : s.ordinates) wsum += o.w;
  for (double f : s.flux) EXPECT_NEAR(f, c * wsum, 1e-13);
  for (auto* face : {&s.face_i, &s.face_j, &s.face_k})
    for (double v : *face) EXPECT_NEAR(v, c, 1e-13);
  // Weights of the default S6 set: the 6 ordinates weigh 1/8 (one octant of 1).
  EXPECT_NEAR(wsum, 1.0 / 8, 1e-15);
}

TEST(KBlockKernel, ParticleBalanceHoldsInEveryOctantWithAndWithoutFixup) {
  std::mt19937_64 rng(11);
  for (bool fixup : {false, true}) {
    for (int d = 0; d < 8; ++d) {
      sweep3d::KBlockState s({8, 7, 5, 4});
      randomize(s, rng);
      s.fixup = fixup;
      const sweep3d::KBlockState before = s;
      sweep3d::sweep_kblock(s, {d & 1 ? 1 : -1, d & 2 ? 1 : -1, d & 4 ? 1 : -1});
      const auto [left, right] = balance(before, s);
      EXPECT_NEAR(left, right, 1e-12 * std::max(1.0, std::fabs(left))) << "octant " << d << " fixup " << fixup;
    }
  }
}

// Thick cells, no source, strong inflow: DD overshoots into negative outflow;
// the fixup removes it and keeps the balance.
TEST(KBlockKernel, FixupRemovesNegativeOutflowAndConserves) {
  sweep3d::KBlockState s({5, 5, 5, 6});
  std::fill(s.sigt.begin(), s.sigt.end(), 20.0);
  std::fill(s.source.begin(), s.source.end(), 0.0);
  for (auto* face : {&s.face_i, &s.face_j, &s.face_k}) std::fill(face->begin(), face->end(), 1.0);
  // One such cell without fixup: psi = Σc/(20 + Σc) < 1/2, so 2·psi − 1 < 0.
  sweep3d::KBlockState plain({1, 1, 1, 6});
  std::fill(plain.sigt.begin(), plain.sigt.end(), 20.0);
  std::fill(plain.source.begin(), plain.source.end(), 0.0);
  for (auto* face : {&plain.face_i, &plain.face_j, &plain.face_k}) std::fill(face->begin(), face->end(), 1.0);
  sweep3d::sweep_kblock(plain);
  double most_negative = 0;
  for (auto* face : {&plain.face_i, &plain.face_j, &plain.face_k})
    for (double v : *face) most_negative = std::min(most_negative, v);
  EXPECT_LT(most_negative, 0.0) << "this setup should need the fixup";

  s.fixup = true;
  const sweep3d::KBlockState before = s;
  const auto counts = sweep3d::sweep_kblock(s);
  EXPECT_GT(counts.fixups, 0u);
  for (auto* face : {&s.face_i, &s.face_j, &s.face_k})
    for (double v : *face) EXPECT_GE(v, 0.0);
  for (double f : s.flux) EXPECT_GE(f, 0.0);
  const auto [left, right] = balance(before, s);
  EXPECT_NEAR(left, right, 1e-12 * std::max(1.0, std::fabs(left)));
}

// Sweeping (−,−,−) equals sweeping (+,+,+) on the mirrored block.
TEST(KBlockKernel, OctantsAreMirrorImages) {
  std::mt19937_64 rng(3);
  sweep3d::KBlockState a({5, 4, 3, 2});
  randomize(a, rng);
  sweep3d::KBlockState b = a;
  const auto sh = a.shape();
  for (int k = 0; k < sh.mk; ++k)
    for (int j = 0; j < sh.jt; ++j)
      for (int i = 0; i < sh.it; ++i) {
        b.source[b.cell(i, j, k)] = a.source[a.cell(sh.it - 1 - i, sh.jt - 1 - j, sh.mk - 1 - k)];
        b.sigt[b.cell(i, j, k)] = a.sigt[a.cell(sh.it - 1 - i, sh.jt - 1 - j, sh.mk - 1 - k)];
      }
  for (int m = 0; m < sh.angles; ++m) {
    for (int k = 0; k < sh.mk; ++k)
      for (int j = 0; j < sh.jt; ++j)
        b.face_i[b.face_i_index(j, k, m)] = a.face_i[a.face_i_index(sh.jt - 1 - j, sh.mk - 1 - k, m)];
    for (int k = 0; k < sh.mk; ++k)
      for (int i = 0; i < sh.it; ++i)
        b.face_j[b.face_j_index(i, k, m)] = a.face_j[a.face_j_index(sh.it - 1 - i, sh.mk - 1 - k, m)];
    for (int j = 0; j < sh.jt; ++j)
      for (int i = 0; i < sh.it; ++i)
        b.face_k[b.face_k_index(i, j, m)] = a.face_k[a.face_k_index(sh.it - 1 - i, sh.jt - 1 - j, m)];
  }
  sweep3d::sweep_kblock(a, {-1, -1, -1});
  sweep3d::sweep_kblock(b, {1, 1, 1});
  for (int k = 0; k < sh.mk; ++k)
    for (int j = 0; j < sh.jt; ++j)
      for (int i = 0; i < sh.it; ++i)
        EXPECT_DOUBLE_EQ(b.flux[b.cell(i, j, k)], a.flux[a.cell(sh.it - 1 - i, sh.jt - 1 - j, sh.mk - 1 - k)]);
}

TEST(KBlockKernel, ReshapeAllocatesOnlyForANewShape) {
  sweep3d::KBlockState s({10, 10, 10, 3});
  const double* flux = s.flux.data();
  sweep3d::sweep_kblock(s, 10, 10, 10, 3);
  EXPECT_EQ(s.flux.data(), flux);
  EXPECT_GT(s.flux[0], 0.0);
  sweep3d::sweep_kblock(s, 20, 10, 10, 3);
  EXPECT_EQ(s.flux.size(), 2000u);
  EXPECT_EQ(s.face_i.size(), 10u * 10 * 3);  // jt·mk·angles: the east-west message of 8·jt·mk·mmi bytes
  EXPECT_EQ(s.face_j.size(), 20u * 10 * 3);
}

TEST(KBlockKernel, ShapeForParams) {
  using sweep3d::KBlockShape;
  EXPECT_EQ(sweep3d::shape_for({{"it", 75}, {"jt", 50}, {"mk", 10}, {"angles", 3}}), (KBlockShape{75, 50, 10, 3}));
  EXPECT_EQ(sweep3d::shape_for({{"cells", 4096}, {"angles", 2}, {"work", 8192}}), (KBlockShape{16, 16, 16, 2}));
  const auto s = sweep3d::shape_for({{"cells", 75 * 50 * 10}, {"angles", 3}});
  // The smallest largest factor (cube root 33.5; no factors all below 50 exist), then the most cube-like.
  EXPECT_EQ(s, (KBlockShape{50, 30, 25, 3}));
  EXPECT_EQ(sweep3d::shape_for({{"cells", 7}, {"angles", 1}}), (KBlockShape{7, 1, 1, 1}));
  EXPECT_THROW(sweep3d::shape_for({{"cells", 10}}), std::invalid_argument);
  EXPECT_THROW(sweep3d::shape_for({{"cells", 10.5}, {"angles", 1}}), std::invalid_argument);
  EXPECT_THROW(sweep3d::shape_for({{"angles", 1}}), std::invalid_argument);
}

// ---------------------------------------------------------------- processor[measured]

ProcessorSpec measured_spec(std::map<std::string, double> numbers = {}) {
  return {"Opteron_measured", "processor[measured]", std::move(numbers), {{"kernel", "sweep3d.kblock"}}};
}

TEST(ProcessorMeasured, KernelIsTheAttributeOrTheTasksComponentsAndMustBeRegistered) {
  sweep3d::register_sweep3d_kernels();
  // Without the attribute, a task is timed by its component's kernel (a PSL
  // kernel { }); a component with none is an error naming both ways.
  auto model = processor::make_processor_model({"Opteron_measured", "processor[measured]", {}, {}});
  auto msg = error_of([&] { model->task_time_ns({"NoKernel", "execute_code_block", {{"work", 1}}}); });
  EXPECT_NE(msg.find("'Opteron_measured' (processor[measured])"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing attribute 'kernel'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("kernel = \"sweep3d.kblock\";"), std::string::npos) << msg;
  EXPECT_NE(msg.find("or a `kernel { }` in component 'NoKernel'"), std::string::npos) << msg;
  msg = error_of([] {
    processor::make_processor_model({"Opteron_measured", "processor[measured]", {}, {{"kernel", "lulesh"}}});
  });
  EXPECT_NE(msg.find("unknown kernel 'lulesh' (registered kernels: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("sweep3d.kblock"), std::string::npos) << msg;
}

// A kernel that times itself (a PSL kernel runs a program that prints its
// times): its samples, each a mean over the program's own batch, are the
// measurement, and their median the task's time.
TEST(ProcessorMeasured, ATimedKernelsSamplesAreTheMeasurement) {
  int calls = 0;
  processor::register_timed_kernel("test.timed", [&calls](const std::map<std::string, double>& p) {
    ++calls;
    const double cells = p.at("cells");
    return std::vector<double>{10 * cells, 20 * cells, 30 * cells, 1000 * cells};
  });
  processor::MeasuredProcessor model({"Host", "processor[measured]", {}, {}});
  const processor::TaskRequest task{"test.timed", "sweep", {{"cells", 2}, {"work", 2}}};
  const auto m = model.measurement(task);
  EXPECT_EQ(m.samples, 4);
  EXPECT_DOUBLE_EQ(m.min_ns, 20);
  EXPECT_DOUBLE_EQ(m.max_ns, 2000);
  EXPECT_DOUBLE_EQ(m.median_ns, 50);  // (40 + 60) / 2
  EXPECT_DOUBLE_EQ(m.mean_ns, 50);
  EXPECT_DOUBLE_EQ(model.task_time_ns(task), 50);
  EXPECT_DOUBLE_EQ(model.fitted_wg_ns(task), 25);
  EXPECT_EQ(calls, 1);  // one run per shape, then the cache
  // Named by the attribute, the same kernel serves tasks of any component.
  processor::MeasuredProcessor named({"Host", "processor[measured]", {{"repetitions", 2}}, {{"kernel", "test.timed"}}});
  EXPECT_EQ(named.measurement({"Other", "sweep", {{"cells", 1}, {"work", 1}}}).samples, 8);
  EXPECT_EQ(calls, 3);
  processor::register_timed_kernel("test.silent",
                                   [](const std::map<std::string, double>&) { return std::vector<double>{}; });
  const auto msg = error_of([&] { model.task_time_ns({"test.silent", "sweep", {{"work", 1}}}); });
  EXPECT_NE(msg.find("kernel 'test.silent' failed for"), std::string::npos) << msg;
  EXPECT_NE(msg.find("it reported no time"), std::string::npos) << msg;
  // Two components' kernels with the same params on one processor: each its own time.
  processor::register_timed_kernel("test.other", [](const std::map<std::string, double>& p) {
    return std::vector<double>{7 * p.at("cells")};
  });
  EXPECT_DOUBLE_EQ(model.task_time_ns({"test.other", "sweep", {{"cells", 2}, {"work", 2}}}), 14);
  EXPECT_DOUBLE_EQ(model.task_time_ns(task), 50);
}

TEST(ProcessorMeasured, TimeGrowsWithCellsAndIsCachedPerShape) {
  sweep3d::register_sweep3d_kernels();
  auto model = processor::make_processor_model(measured_spec());
  EXPECT_EQ(model->evaluator(), "processor[measured]");
  const auto small = kblock_task(16 * 16 * 16, 4), large = kblock_task(32 * 32 * 32, 4);  // 8x the cells
  const double t_small = model->task_time_ns(small);
  const double t_large = model->task_time_ns(large);
  EXPECT_GT(t_small, 0.0);
  const double ratio = t_large / t_small;
  EXPECT_GT(ratio, 3.0) << t_small << " ns vs " << t_large << " ns";
  EXPECT_LT(ratio, 30.0) << t_small << " ns vs " << t_large << " ns";

  EXPECT_EQ(model->task_time_ns(small), t_small);  // cached: the same value
  EXPECT_EQ(model->task_time_ns(large), t_large);

  // Fitted Wg: ns per cell-angle, the same number in both places.
  auto& measured = dynamic_cast<processor::MeasuredProcessor&>(*model);
  EXPECT_EQ(measured.fitted_wg_ns(small), t_small / (16 * 16 * 16 * 4));
  EXPECT_EQ(processor::fitted_wg_ns(*model, large), t_large / (32 * 32 * 32 * 4));
  const auto m = measured.measurement(small);
  EXPECT_GE(m.samples, 5);
  EXPECT_LE(m.min_ns, m.median_ns);
  EXPECT_GE(m.max_ns, m.median_ns);
  EXPECT_EQ(model->task_time_ns(small), m.mean_ns);
  EXPECT_LE(m.min_ns, m.mean_ns);
  EXPECT_GE(m.max_ns, m.mean_ns);
}

// The measured time per call is the mean of the samples, those above twice
// the median left out: a kernel whose calls differ by design is charged its
// mean, a descheduled sample is not charged at all.
TEST(ProcessorMeasured, TypicalMeanKeepsSlowCallsAndDropsBursts) {
  using M = processor::MeasuredProcessor;
  // Three fast calls for every slow one (as the Sweep3D column's octants):
  // the mean, 125, not the median, 100.
  std::vector<double> bimodal;
  for (int k = 0; k < 40; ++k) bimodal.push_back(k % 4 == 3 ? 200 : 100);
  EXPECT_DOUBLE_EQ(M::typical_mean(bimodal), 125);
  // A burst of other work (ten times longer) is left out.
  std::vector<double> burst = {100, 100, 100, 100, 1000};
  EXPECT_DOUBLE_EQ(M::typical_mean(burst), 100);
  // Exactly twice the median is kept; just above it is not.
  EXPECT_DOUBLE_EQ(M::typical_mean({10, 10, 20}), 40.0 / 3);
  EXPECT_DOUBLE_EQ(M::typical_mean({10, 10, 20.5}), 10);
  EXPECT_DOUBLE_EQ(M::typical_mean({7}), 7);
  EXPECT_DOUBLE_EQ(M::typical_mean({}), 0);
}

// Each distinct params map is measured once per model object: count the
// kernel's calls.
TEST(ProcessorMeasured, EachShapeIsMeasuredOnce) {
  static int calls = 0;
  processor::register_kernel("test.counting", [](const std::map<std::string, double>& p) {
    ++calls;
    if (p.at("n") < 0) throw std::invalid_argument("n must be >= 0");
  });
  processor::MeasuredProcessor model(
      {"Cpu", "processor[measured]", {{"repetitions", 5}}, {{"kernel", "test.counting"}}});
  const TaskRequest a{"K", "t", {{"work", 1}, {"n", 1}}}, b{"K", "t", {{"work", 1}, {"n", 2}}};
  const double ta = model.task_time_ns(a);
  EXPECT_EQ(calls, 6);  // one warm-up call and 5 timed ones
  EXPECT_EQ(model.task_time_ns(a), ta);
  EXPECT_EQ(calls, 6);
  model.task_time_ns(b);
  EXPECT_EQ(calls, 12);
  processor::MeasuredProcessor other(
      {"Cpu", "processor[measured]", {{"repetitions", 5}}, {{"kernel", "test.counting"}}});
  other.task_time_ns(a);  // the cache belongs to the model object
  EXPECT_EQ(calls, 18);
  const auto msg = error_of([&] { model.task_time_ns(TaskRequest{"K", "t", {{"n", -1}}}); });
  EXPECT_NE(msg.find("kernel 'test.counting' failed for task K.t: n must be >= 0"), std::string::npos) << msg;
  const auto names = processor::kernels();
  EXPECT_NE(std::find(names.begin(), names.end(), "test.counting"), names.end());
}

// A kernel whose calls differ within a cycle (a column's blocks by octant)
// is timed over whole cycles: every timed call counted, a multiple of it.
TEST(ProcessorMeasured, KernelsWithACycleAreTimedOverWholeCycles) {
  static long calls = 0;
  processor::register_kernel("test.slow_cycle", [](const std::map<std::string, double>&) {
    ++calls;
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(60);
    while (std::chrono::steady_clock::now() < until) {
    }
  });
  processor::register_kernel_cycle(
      "test.slow_cycle", [](const std::map<std::string, double>& p) { return static_cast<int>(p.at("cycle")); });
  processor::MeasuredProcessor model({"Cpu", "processor[measured]", {}, {{"kernel", "test.slow_cycle"}}});
  for (double cycle : {7.0, 1700.0}) {
    calls = 0;
    const auto m = model.measurement({"K", "t", {{"work", 1}, {"cycle", cycle}}});
    EXPECT_EQ(m.cycle, static_cast<int>(cycle));
    EXPECT_EQ(m.batch, 1);
    EXPECT_EQ(m.samples % static_cast<int>(cycle), 0) << m.samples;
    EXPECT_GE(m.samples, static_cast<int>(cycle));
    EXPECT_EQ(calls, m.samples + 2);  // the warm-up call and the one that sizes the batch
  }
  // Short calls run in batches: each batch whole cycles.
  processor::register_kernel("test.fast_cycle", [](const std::map<std::string, double>&) { ++calls; });
  processor::register_kernel_cycle("test.fast_cycle", [](const std::map<std::string, double>&) { return 3; });
  processor::MeasuredProcessor fast({"Cpu", "processor[measured]", {}, {{"kernel", "test.fast_cycle"}}});
  const auto f = fast.measurement({"K", "t", {{"work", 1}}});
  EXPECT_EQ(f.cycle, 3);
  EXPECT_GT(f.batch, 1);
  EXPECT_EQ(f.batch % 3, 0) << f.batch;
  // The Sweep3D column's cycle: 8 octants of ceil(kt / mk) k-blocks; a lone block has none.
  sweep3d::register_sweep3d_kernels();
  const processor::KernelCycle sweep = processor::find_kernel_cycle("sweep3d.kblock");
  ASSERT_TRUE(sweep);
  EXPECT_EQ(sweep({{"it", 150}, {"jt", 150}, {"mk", 10}, {"angles", 3}, {"kt", 150}}), 120);
  EXPECT_EQ(sweep({{"it", 50}, {"jt", 50}, {"mk", 30}, {"angles", 2}, {"kt", 50}}), 16);
  EXPECT_EQ(sweep({{"it", 8}, {"jt", 8}, {"mk", 10}, {"angles", 3}, {"kt", 4}}), 8);
  EXPECT_EQ(sweep({{"it", 8}, {"jt", 8}, {"mk", 10}, {"angles", 3}}), 1);
  EXPECT_FALSE(processor::find_kernel_cycle("test.counting"));
}

TEST(ProcessorMeasured, RepetitionsOverrideTheAdaptiveCount) {
  sweep3d::register_sweep3d_kernels();
  processor::MeasuredProcessor model(measured_spec({{"repetitions", 7}}));
  const TaskRequest task{
      "KBlock", "execute_code_block", {{"work", 600}, {"it", 10}, {"jt", 5}, {"mk", 4}, {"angles", 3}}};
  const auto m = model.measurement(task);
  EXPECT_EQ(m.samples, 7);
  EXPECT_EQ(m.batch, 1);
  EXPECT_GT(m.median_ns, 0.0);
  const auto msg = error_of([] { processor::MeasuredProcessor bad(measured_spec({{"repetitions", 2.5}})); });
  EXPECT_NE(msg.find("'repetitions' is 2.5"), std::string::npos) << msg;
}

std::thread::id& ids_main() {
  static std::thread::id id;
  return id;
}

TEST(ProcessorMeasured, ProcessesOfARunComputeTogetherWhileOneIsTimed) {
  // The kernel notes how many copies run at once; with procs = 2 on a
  // machine of 2 or more cores two run, on distinct threads, and none is left
  // running after the timing.
  static std::atomic<int> inside{0}, peak{0};
  static std::mutex ids_mutex;
  static std::set<std::thread::id> ids;
  processor::register_kernel("test.concurrent", [](const std::map<std::string, double>& p) {
    const int now = ++inside;
    for (int seen = peak; now > seen && !peak.compare_exchange_weak(seen, now);) {
    }
    {
      std::lock_guard lock(ids_mutex);
      ids.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    --inside;
    if (p.count("fail") && std::this_thread::get_id() != ids_main()) throw std::runtime_error("helper failed");
  });
  processor::MeasuredProcessor model(
      {"Cpu", "processor[measured]", {{"repetitions", 20}}, {{"kernel", "test.concurrent"}}});
  const TaskRequest alone{"K", "t", {{"work", 1}}}, pair{"K", "t", {{"work", 1}, {"procs", 2}}},
      many{"K", "t", {{"work", 2}, {"procs", 100000}}};
  ids_main() = std::this_thread::get_id();
  EXPECT_EQ(model.measurement(alone).concurrent, 1);
  EXPECT_EQ(peak, 1);
  EXPECT_EQ(ids.size(), 1u);
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores < 2) GTEST_SKIP() << "one core: nothing runs concurrently";
  EXPECT_EQ(model.measurement(pair).concurrent, 2);
  EXPECT_EQ(peak, 2);
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(inside, 0);  // the helper stopped with the timing
  EXPECT_EQ(processor::MeasuredProcessor::concurrency(many), static_cast<int>(cores));
  const auto msg = error_of([&] {
    model.measurement(TaskRequest{"K", "t", {{"work", 3}, {"procs", 2}, {"fail", 1}}});
  });
  EXPECT_NE(msg.find("kernel 'test.concurrent' failed for task K.t: helper failed"), std::string::npos) << msg;
}

TEST(ProcessorMeasured, KernelFailureNamesKernelAndTask) {
  sweep3d::register_sweep3d_kernels();
  auto model = processor::make_processor_model(measured_spec());
  const auto msg = error_of([&] { model->task_time_ns(TaskRequest{"KBlock", "execute_code_block", {{"cells", 8}}}); });
  EXPECT_NE(msg.find("kernel 'sweep3d.kblock' failed for task KBlock.execute_code_block"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'angles'"), std::string::npos) << msg;
}

// ---------------------------------------------------------------- processor[external]

class ProcessorExternal : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("poems_processor_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    // No zombies: this process has no children left.
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
  }
  std::string script(const std::string& name, const std::string& text, bool executable = true) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    std::filesystem::permissions(path, executable
                                           ? std::filesystem::perms::owner_all
                                           : std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path.string();
  }
  std::unique_ptr<processor::ProcessorModel> model(const std::string& command, double timeout_ns = 0) {
    ProcessorSpec spec{"Gem5Box", "processor[external]", {{"clock_ghz", 2.5}}, {{"command", command}}};
    if (timeout_ns > 0) spec.numbers["timeout"] = timeout_ns;
    return processor::make_processor_model(spec);
  }
  std::string error(const std::string& command, double timeout_ns = 0) {
    auto m = model(command, timeout_ns);
    return error_of([&] { m->task_time_ns(kblock_task(1000, 3)); });
  }
  std::filesystem::path dir_;
};

TEST_F(ProcessorExternal, ReturnsTheCommandsTimeExactly) {
  const auto path = script("const.sh", "#!/bin/sh\ncat > /dev/null\necho '{\"time_ns\": 1234.5}'\n");
  EXPECT_EQ(model(path)->task_time_ns(kblock_task(1000, 3)), 1234.5);
}

TEST_F(ProcessorExternal, TheCommandSeesTheRequest) {
  const auto counter = (dir_ / "calls").string();
  const auto path = script("echo.py", R"(import json, sys
r = json.load(sys.stdin)
open(sys.argv[1], "a").write("call\n")
assert r["component"] == "KBlock", r
assert r["transaction"] == "execute_code_block", r
assert r["processor"]["component"] == "Gem5Box", r
assert r["processor"]["numbers"]["clock_ghz"] == 2.5, r
assert r["processor"]["strings"]["command"].startswith("python3"), r
assert r["params"]["cells"] * r["params"]["angles"] == r["params"]["work"], r
print(json.dumps({"time_ns": r["params"]["work"] * 2}))
)");
  auto m = model("python3 " + path + " " + counter);
  EXPECT_EQ(m->task_time_ns(kblock_task(1000, 3)), 6000.0);
  EXPECT_EQ(m->task_time_ns(kblock_task(1000, 3)), 6000.0);  // cached: one run
  EXPECT_EQ(m->task_time_ns(kblock_task(500, 3)), 3000.0);
  std::ifstream in(counter);
  int calls = 0;
  for (std::string line; std::getline(in, line);) ++calls;
  EXPECT_EQ(calls, 2);
}

TEST_F(ProcessorExternal, OutputThatIsNotJson) {
  const auto msg = error("echo 'hello world, not json'");
  EXPECT_NE(msg.find("'Gem5Box' (processor[external])"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not JSON: 'hello world, not json"), std::string::npos) << msg;
  EXPECT_NE(error("true").find("printed nothing on stdout"), std::string::npos);
}

TEST_F(ProcessorExternal, JsonWithoutNumericTimeNs) {
  auto msg = error("echo '{\"time\": 5}'");
  EXPECT_NE(msg.find("without a numeric \"time_ns\""), std::string::npos) << msg;
  msg = error("echo '{\"time_ns\": \"5\"}'");
  EXPECT_NE(msg.find("without a numeric \"time_ns\""), std::string::npos) << msg;
  msg = error("echo '[1, 2]'");
  EXPECT_NE(msg.find("without a numeric \"time_ns\""), std::string::npos) << msg;
}

TEST_F(ProcessorExternal, NegativeTime) {
  const auto msg = error("echo '{\"time_ns\": -3}'");
  EXPECT_NE(msg.find("time_ns = -3; a time must be >= 0"), std::string::npos) << msg;
}

TEST_F(ProcessorExternal, NonZeroExitQuotesStderr) {
  const auto msg = error("echo 'model exploded' >&2; echo 'line two' >&2; exit 3");
  EXPECT_NE(msg.find("failed with exit code 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model exploded\n  line two"), std::string::npos) << msg;
  EXPECT_NE(msg.find("task KBlock.execute_code_block"), std::string::npos) << msg;
}

TEST_F(ProcessorExternal, MissingAndNotExecutableCommands) {
  auto msg = error("/nonexistent/poems-model --fast");
  EXPECT_NE(msg.find("command not found (exit code 127)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/nonexistent/poems-model"), std::string::npos) << msg;
  msg = error(script("noexec.sh", "#!/bin/sh\necho '{\"time_ns\": 1}'\n", false));
  EXPECT_NE(msg.find("not executable (exit code 126"), std::string::npos) << msg;
}

TEST_F(ProcessorExternal, KilledBySignal) {
  const auto msg = error("kill -9 $$");
  EXPECT_NE(msg.find("killed by signal 9 (SIGKILL)"), std::string::npos) << msg;
}

TEST_F(ProcessorExternal, TimeoutKillsTheProcessGroupQuickly) {
  const auto pidfile = (dir_ / "pid").string();
  const auto start = std::chrono::steady_clock::now();
  const auto msg = error("sleep 5 & echo $! > " + pidfile + "; wait", 200e6);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_NE(msg.find("timed out after 200 ms (timeout = 200000000 ns"), std::string::npos) << msg;
  // The grandchild (sleep) is dead too: gone, or a zombie waiting for init.
  std::ifstream in(pidfile);
  pid_t sleeper = 0;
  in >> sleeper;
  ASSERT_GT(sleeper, 0);
  for (int tries = 0; tries < 100; ++tries) {
    std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
    std::string pid, comm, state;
    if (!(stat >> pid >> comm >> state) || state == "Z") break;
    ::usleep(10000);
    if (tries == 99) ADD_FAILURE() << "sleep " << sleeper << " still runs (state " << state << ")";
  }
}

TEST_F(ProcessorExternal, CommandThatIgnoresStdinAndLeavesABackgroundChild) {
  // A request larger than a pipe buffer to a command that never reads it
  // (EPIPE, not SIGPIPE), and a background child holding stdout open.
  TaskRequest big = kblock_task(10, 1);
  for (int i = 0; i < 20000; ++i) big.params["p" + std::to_string(i)] = i;
  const auto start = std::chrono::steady_clock::now();
  auto m = model("sleep 3 & echo '{\"time_ns\": 7}'", 2e9);
  EXPECT_EQ(m->task_time_ns(big), 7.0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.5);
}

// True once `pid` is gone (or a zombie nobody will run again).
bool process_gone(pid_t pid) {
  for (int tries = 0; tries < 200; ++tries) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string field, comm, state;
    if (!(stat >> field >> comm >> state) || state == "Z") return true;
    ::usleep(10000);
  }
  return false;
}

pid_t read_pid(const std::string& path) {
  pid_t pid = 0;
  for (int tries = 0; tries < 200 && pid == 0; ++tries) {
    std::ifstream in(path);
    in >> pid;
    if (pid == 0) ::usleep(10000);
  }
  return pid;
}

TEST_F(ProcessorExternal, TimeoutKillsWhatLeftTheProcessGroup) {
  // setsid puts the sleeper in a session (and group) of its own, out of reach
  // of a kill of the command's group: the keeper still finds and kills it.
  const auto pidfile = (dir_ / "pid").string();
  const auto msg = error("setsid sleep 30 & echo $! > " + pidfile + "; sleep 30", 300e6);
  EXPECT_NE(msg.find("timed out after 300 ms"), std::string::npos) << msg;
  const pid_t sleeper = read_pid(pidfile);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(process_gone(sleeper)) << "setsid sleep " << sleeper << " survived the timeout";
}

TEST_F(ProcessorExternal, DaemonsTheCommandLeavesBehindAreKilled) {
  // A double fork into a new session (how daemons detach), then a normal
  // exit with a good answer: the answer counts, the daemon does not survive.
  const auto pidfile = (dir_ / "daemon").string();
  const auto path = script("daemon.sh",
                           "#!/bin/sh\n"
                           "sh -c 'setsid sh -c \"sleep 30 & echo \\$! > " +
                               pidfile +
                               "; wait\" < /dev/null > /dev/null 2>&1 &'\n"
                               "while [ ! -s " +
                               pidfile +
                               " ]; do sleep 0.01; done\n"
                               "echo '{\"time_ns\": 5}'\n");
  auto m = model(path, 5e9);
  EXPECT_EQ(m->task_time_ns(kblock_task(1000, 3)), 5.0);
  const pid_t daemon = read_pid(pidfile);
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(process_gone(daemon)) << "daemon " << daemon << " survived the command";
}

TEST_F(ProcessorExternal, NulBytesAndTrailingOutputAreRefused) {
  // A lenient reader stops at the NUL and sees {"time_ns": 5}.
  auto msg = error("printf '{\"time_ns\": 5}\\000{\"time_ns\": 9}'");
  EXPECT_NE(msg.find("printed a NUL byte (at byte 14 of stdout)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\\x00"), std::string::npos) << msg;
  msg = error("echo '{\"time_ns\": 5} and more'");
  EXPECT_NE(msg.find("printed something after its JSON document: 'and more"), std::string::npos) << msg;
  msg = error("echo '{\"time_ns\": 5}'; echo '{\"time_ns\": 6}'");
  EXPECT_NE(msg.find("after its JSON document: '{\"time_ns\": 6}"), std::string::npos) << msg;
  // Whitespace after the document is fine.
  EXPECT_EQ(model("printf '{\"time_ns\": 5}\\n\\n  \\n'")->task_time_ns(kblock_task(1000, 3)), 5.0);
}

TEST_F(ProcessorExternal, HostileOutputIsShownEscaped) {
  // Terminal escapes (ESC, a C1 CSI, BEL) on stdout and stderr, in the command itself too.
  auto msg = error("printf '\\033]0;pwned\\007\\302\\233x'");
  EXPECT_EQ(msg.find('\033'), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\007'), std::string::npos) << msg;
  EXPECT_EQ(msg.find("\302\233"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\\x1b]0;pwned\\x07\\xc2\\x9bx"), std::string::npos) << msg;
  msg = error("printf '\\033[2J\\377' >&2; exit 4");
  EXPECT_NE(msg.find("failed with exit code 4"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\033'), std::string::npos) << msg;
  EXPECT_NE(msg.find("\\x1b[2J\\xff"), std::string::npos) << msg;
  msg = error("exit 5 # \033[31m");
  EXPECT_EQ(msg.find('\033'), std::string::npos) << msg;
  EXPECT_NE(msg.find("# \\x1b[31m"), std::string::npos) << msg;
}

TEST_F(ProcessorExternal, TimesBeyondTheClockAreRefused) {
  const auto msg = error("echo '{\"time_ns\": 1e300}'");
  EXPECT_NE(msg.find("takes 1e+300 ns; one task may take at most 2^60 ps"), std::string::npos) << msg;
  EXPECT_EQ(model("echo '{\"time_ns\": 1152921504606846}'")->task_time_ns(kblock_task(1000, 3)), 1152921504606846.0);
}

TEST_F(ProcessorExternal, AttributesAreChecked) {
  auto msg = error_of([] { processor::make_processor_model({"Gem5Box", "processor[external]", {}, {}}); });
  EXPECT_NE(msg.find("missing attribute 'command'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("command = \"python3 model.py\";"), std::string::npos) << msg;
  msg = error_of([] {
    processor::make_processor_model({"Gem5Box", "processor[external]", {{"timeout", -1}}, {{"command", "true"}}});
  });
  EXPECT_NE(msg.find("'timeout' is -1"), std::string::npos) << msg;
}

}  // namespace
