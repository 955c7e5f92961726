// processor[wg]: time = work × Wg (Wg in ns per unit of work).
#include "common.h"

namespace poems::processor::detail {
namespace {

class WgProcessor : public ProcessorModel {
 public:
  explicit WgProcessor(const ProcessorSpec& spec) : spec_(spec) {
    auto it = spec.numbers.find("Wg");
    if (it == spec.numbers.end())
      throw ProcessorError(who(spec) + ": missing attribute 'Wg' (time per unit of work), e.g. `param Wg = 60ns;` " +
                           "and `Wg = Wg;` in the profile");
    if (!std::isfinite(it->second) || it->second < 0)
      throw ProcessorError(who(spec) + ": attribute 'Wg' is " + format_number(it->second) +
                           " ns; it must be a time >= 0, e.g. `param Wg = 60ns;`");
    wg_ = it->second;
  }
  std::string evaluator() const override { return "processor[wg]"; }
  double task_time_ns(const TaskRequest& task) override {
    return checked_time(spec_, task, work_of(spec_, task) * wg_);
  }

 private:
  ProcessorSpec spec_;
  double wg_ = 0;
};

}  // namespace

std::unique_ptr<ProcessorModel> make_wg(const ProcessorSpec& spec) { return std::make_unique<WgProcessor>(spec); }

}  // namespace poems::processor::detail
