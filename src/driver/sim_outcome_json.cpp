#include "sim_outcome_json.hpp"

namespace podsim::driver {

nlohmann::json sim_outcome_json(const SimOutcome& s) {
  return {{"status", s.status},
          {"detail", s.detail},
          {"step_time", s.step_time},
          {"tokens_per_s", s.tokens_per_s},
          {"mfu", s.mfu},
          {"memory", s.memory},
          {"breakdown", s.breakdown},
          {"bubble", s.bubble},
          {"description", s.description},
          {"hints", s.hints}};
}

SimOutcome sim_outcome_from(const nlohmann::json& j) {
  SimOutcome o;
  o.status = j.at("status").get<std::string>();
  o.detail = j.at("detail").get<std::string>();
  o.step_time = j.at("step_time").get<double>();
  o.tokens_per_s = j.at("tokens_per_s").get<double>();
  o.mfu = j.at("mfu").get<double>();
  o.memory = j.at("memory").get<double>();
  o.breakdown = j.at("breakdown").get<decltype(o.breakdown)>();
  o.bubble = j.at("bubble").get<double>();
  o.description = j.at("description").get<std::string>();
  o.hints = j.value("hints", std::vector<std::string>{});
  return o;
}

}  // namespace podsim::driver
