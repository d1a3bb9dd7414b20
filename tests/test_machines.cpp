// Blackwell machines: the B200 / B300 / GB200 / GB300 presets (datasheet peaks per precision, memory,
// NVLink5), their derived profiles, NVLink domains that span one NVL72 rack or several servers (topology
// key scale_up.domain_devices), and jobs on some of each server's GPUs (node.devices_used).
#include <gtest/gtest.h>

#include <string>

#include "podsim/core/error.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/report/summary_text.hpp"
#include "podsim/topology/graph.hpp"
#include "podsim/workload/workload_model.hpp"
#include "test_helpers.hpp"

using namespace podsim;
using podsim::testing::error_of;
using podsim::testing::preset;
using topology::LinkClass;
using topology::Precision;

namespace {

struct Peaks {
  const char* preset;
  double nvfp4, fp8, bf16, tf32, hbm_gib, hbm_gbps;
  int sms;
};

// Dense datasheet figures in TFLOP/s (topology comments give the sources).
constexpr Peaks kPeaks[] = {
    {"dgx-b200-superpod", 9000, 4500, 2250, 1100, 179, 7700, 148},
    {"dgx-b300-superpod", 14000, 4500, 2250, 1100, 268, 8000, 160},
    {"dgx-gb200-superpod", 10000, 5000, 2500, 1250, 185, 8000, 148},
    {"dgx-gb300-superpod", 15000, 5000, 2500, 1250, 278, 8000, 160},
};

// The link classes a route crosses, in order.
std::vector<LinkClass> classes(const topology::Topology& topo, int src, int dst) {
  topology::Route r;
  topo.router().route(topo.device_vertex[src], topo.device_vertex[dst], r);
  std::vector<LinkClass> out;
  for (auto h : r) out.push_back(topo.links[h.link].cls);
  return out;
}

bool all_nvlink(const std::vector<LinkClass>& cls) {
  for (auto c : cls)
    if (c != LinkClass::nvlink) return false;
  return !cls.empty();
}

}  // namespace

TEST(BlackwellPresets, PeaksPerPrecisionMemoryAndNvlink5) {
  for (const auto& e : kPeaks) {
    SCOPED_TRACE(e.preset);
    auto topo = preset(e.preset, {{"nodes", "1"}});
    const auto& d = topo.device;
    EXPECT_EQ(d.architecture, topology::Architecture::blackwell);
    EXPECT_DOUBLE_EQ(d.peak(Precision::nvfp4), e.nvfp4 * 1e12);
    EXPECT_DOUBLE_EQ(d.peak(Precision::fp8), e.fp8 * 1e12);
    EXPECT_DOUBLE_EQ(d.peak(Precision::mxfp8), e.fp8 * 1e12);  // MX block scales run at the fp8 rate
    EXPECT_DOUBLE_EQ(d.peak(Precision::fp8_block), e.fp8 * 1e12);
    EXPECT_DOUBLE_EQ(d.peak(Precision::bf16), e.bf16 * 1e12);
    EXPECT_DOUBLE_EQ(d.peak(Precision::fp16), e.bf16 * 1e12);
    EXPECT_DOUBLE_EQ(d.peak(Precision::tf32), e.tf32 * 1e12);
    EXPECT_DOUBLE_EQ(d.peak(Precision::fp8), 2 * d.peak(Precision::bf16));  // dense, not sparse
    EXPECT_DOUBLE_EQ(d.hbm_bytes, e.hbm_gib * (1ull << 30));
    EXPECT_DOUBLE_EQ(d.hbm_bandwidth, e.hbm_gbps * 1e9);
    EXPECT_EQ(d.sm_count, e.sms);
    for (const auto& l : topo.links)
      if (l.cls == LinkClass::nvlink) EXPECT_DOUBLE_EQ(l.bandwidth, 900e9);  // 18 x 50 GB/s per direction
  }
}

TEST(BlackwellPresets, ProfilesAreDerivedWithEveryGemmFormat) {
  for (const auto& e : kPeaks) {
    SCOPED_TRACE(e.preset);
    auto topo = preset(e.preset, {{"nodes", "1"}});
    const auto& p = topo.device_profile;
    ASSERT_FALSE(p.provenance.empty());
    for (const auto& entry : p.provenance) EXPECT_NE(entry.kind, "measured") << entry.source;
    for (const char* f : {"fp8", "fp8_block", "mxfp8", "nvfp4"})
      EXPECT_EQ(p.gemm.format_efficiency.count(f), 1u) << f;
    // Transformer Engine runs the 128-block recipe through MXFP8 GEMMs on Blackwell (never faster), and
    // MXFP8's block scales cost against per-tensor fp8 (validation/te-gemm-profiling.csv).
    EXPECT_LE(p.gemm.format_scale("fp8_block"), p.gemm.format_scale("mxfp8"));
    EXPECT_LT(p.gemm.format_scale("mxfp8"), p.gemm.format_scale("fp8"));
    EXPECT_FALSE(topo.fabric_profile.provenance.empty());
    EXPECT_GT(topo.fabric_profile.efficiency("nvlink"), 0.5);
  }
}

TEST(BlackwellPresets, NicsPerGpuMatchTheReferenceArchitectures) {
  auto b200 = preset("dgx-b200-superpod", {{"nodes", "2"}});
  auto b300 = preset("dgx-b300-superpod", {{"nodes", "2"}});
  auto gb300 = preset("dgx-gb300-superpod", {{"nodes", "2"}});
  for (const auto* t : {&b200, &b300, &gb300}) {
    int nics = t->role_counts()["nic"];
    EXPECT_EQ(nics, t->device_count());  // one NIC (rail) per GPU
  }
  auto ib_bandwidth = [](const topology::Topology& t) {
    for (const auto& l : t.links)
      if (l.cls == LinkClass::infiniband) return l.bandwidth;
    return 0.0;
  };
  EXPECT_DOUBLE_EQ(ib_bandwidth(b200), 50e9);   // NDR 400 Gb/s
  EXPECT_DOUBLE_EQ(ib_bandwidth(b300), 100e9);  // XDR 800 Gb/s
  EXPECT_DOUBLE_EQ(ib_bandwidth(gb300), 100e9);
}

TEST(Nvl72, OneRackIsOneNvlinkDomainOfSeventyTwo) {
  auto topo = preset("dgx-gb200-superpod", {{"nodes", "1"}});
  EXPECT_EQ(topo.device_count(), 72);
  auto roles = topo.role_counts();
  EXPECT_EQ(roles["nvswitch"], 1);
  EXPECT_EQ(roles["nic"], 72);
  EXPECT_EQ(roles.count("leaf"), 0u);  // one rack: no scale-out fabric
  EXPECT_EQ(topo.vertices.size(), 72u + 72 + 1);
  EXPECT_EQ(topo.links.size(), 72u * 2);          // NVLink + PCIe per GPU
  EXPECT_TRUE(all_nvlink(classes(topo, 0, 71)));  // trays 0 and 17 of the rack: NVLink only
}

TEST(Nvl72, TwoRacksJoinThroughOneLeafPerRail) {
  auto topo = preset("dgx-gb200-superpod", {{"nodes", "2"}});
  EXPECT_EQ(topo.device_count(), 144);
  auto roles = topo.role_counts();
  EXPECT_EQ(roles["nvswitch"], 2);
  EXPECT_EQ(roles["leaf"], 72);  // one SU: a leaf per rail
  EXPECT_EQ(topo.vertices.size(), 2u * 145 + 72);
  EXPECT_EQ(topo.links.size(), 2u * 144 + 144);  // + one NIC-leaf link per GPU
  EXPECT_EQ(topology::connected_components(topo), 1);
  EXPECT_TRUE(topology::check_routes(topo, 40).empty());
  // A tensor-parallel group of 8 inside rack 0 (devices 32..39) stays on NVLink; across racks it is IB.
  for (int d = 33; d < 40; ++d) EXPECT_TRUE(all_nvlink(classes(topo, 32, d)));
  auto across = classes(topo, 5, 72 + 5);
  EXPECT_FALSE(all_nvlink(across));
  EXPECT_EQ(std::count(across.begin(), across.end(), LinkClass::infiniband), 2);  // nic-leaf-nic
}

TEST(NvlinkDomain, SpansSeveralServersWithOneSwitch) {
  // NVL36x2-style: servers of 36 GPUs, two per NVLink domain; four servers are two domains.
  auto topo = preset(
      "dgx-gb200-superpod",
      {{"nodes", "4"}, {"node.devices", "36"}, {"node.nics", "36"}, {"node.scale_up.domain_devices", "72"}});
  EXPECT_EQ(topo.role_counts()["nvswitch"], 2);
  EXPECT_EQ(topo.devices_per_node, 36);
  EXPECT_TRUE(all_nvlink(classes(topo, 3, 36 + 20)));  // other server, same domain: NVLink only
  EXPECT_FALSE(all_nvlink(classes(topo, 3, 72 + 3)));  // other domain: through the NICs
  EXPECT_TRUE(topology::check_routes(topo, 40).empty());
  bool described = false;
  for (const auto& [k, v] : topo.facts) described |= k == "NVLink domain" && v.find("72 devices") == 0;
  EXPECT_TRUE(described);
}

TEST(NvlinkDomain, DefaultsToOneServer) {
  auto topo = preset("dgx-h100-superpod", {{"nodes", "2"}});
  EXPECT_EQ(topo.role_counts()["nvswitch"], 2);
  EXPECT_FALSE(all_nvlink(classes(topo, 0, 8)));
}

TEST(NvlinkDomain, BadSizesNameTheFieldAndWhatIsValid) {
  std::string zero = error_of([] { preset("dgx-gb200-superpod", {{"node.scale_up.domain_devices", "0"}}); });
  EXPECT_NE(zero.find("domain_devices"), std::string::npos) << zero;
  std::string negative = error_of([] {
    preset("dgx-gb200-superpod", {{"node.scale_up.domain_devices", "-72"}});
  });
  EXPECT_NE(negative.find("domain_devices"), std::string::npos) << negative;
  std::string partial = error_of([] {
    preset("dgx-gb200-superpod", {{"node.scale_up.domain_devices", "100"}});
  });
  EXPECT_NE(partial.find("domain_devices"), std::string::npos) << partial;
  EXPECT_NE(partial.find("multiple of 72"), std::string::npos) << partial;
  std::string nodes = error_of([] {
    preset("dgx-gb200-superpod", {{"nodes", "3"}, {"node.scale_up.domain_devices", "144"}});
  });
  EXPECT_NE(nodes.find("nodes"), std::string::npos) << nodes;
  EXPECT_NE(nodes.find("multiple of 2"), std::string::npos) << nodes;
  EXPECT_NE(nodes.find("topology.nodes=3"), std::string::npos) << nodes;  // names the --set that made it
}

// A job on 64 of each NVL72 rack's 72 GPUs: only the used GPUs and their NICs are built, each keeping its
// NVLink port and NIC, and every rack stays one NVLink domain.
TEST(DevicesUsed, JobOnSixtyFourGpusPerRackKeepsOneDomainPerRack) {
  auto topo = preset("dgx-gb200-superpod", {{"nodes", "2"}, {"node.devices_used", "64"}});
  EXPECT_EQ(topo.device_count(), 128);
  EXPECT_EQ(topo.devices_per_node, 64);
  EXPECT_EQ(topo.installed_devices_per_node, 72);
  auto roles = topo.role_counts();
  EXPECT_EQ(roles["nvswitch"], 2);
  EXPECT_EQ(roles["nic"], 128);
  EXPECT_EQ(roles["leaf"], 64);                   // a leaf per used rail
  EXPECT_TRUE(all_nvlink(classes(topo, 0, 63)));  // the first 64 ranks: one rack
  EXPECT_FALSE(all_nvlink(classes(topo, 63, 64)));
  double nvlink = 0;
  for (const auto& l : topo.links)
    if (l.cls == LinkClass::nvlink) nvlink = l.bandwidth;
  EXPECT_DOUBLE_EQ(nvlink, 900e9);  // the used GPUs keep their NVLink5 port
  EXPECT_TRUE(topology::check_routes(topo, 40).empty());
  bool described = false;
  for (const auto& [k, v] : topo.facts)
    described |= k == "servers" && v.find("the job on 64 of each") != v.npos;
  EXPECT_TRUE(described);
  // Unset, the job uses every GPU.
  EXPECT_EQ(preset("dgx-gb200-superpod", {{"nodes", "2"}}).installed_devices_per_node, 0);
}

TEST(DevicesUsed, BadCountsNameTheFieldAndWhatIsValid) {
  std::string more = error_of([] { preset("dgx-h100-superpod", {{"node.devices_used", "9"}}); });
  EXPECT_NE(more.find("devices_used"), std::string::npos) << more;
  std::string zero = error_of([] { preset("dgx-h100-superpod", {{"node.devices_used", "0"}}); });
  EXPECT_NE(zero.find("devices_used"), std::string::npos) << zero;
  std::string half_nic = error_of([] {
    preset("dgx-h100-superpod", {{"node.nics", "4"}, {"node.devices_used", "3"}});
  });
  EXPECT_NE(half_nic.find("devices_used"), std::string::npos) << half_nic;
  EXPECT_NE(half_nic.find("multiple of 2"), std::string::npos) << half_nic;
  // Two GPUs per NIC, four of eight GPUs used: two NICs.
  auto half = preset("dgx-h100-superpod", {{"nodes", "2"}, {"node.nics", "4"}, {"node.devices_used", "4"}});
  EXPECT_EQ(half.device_count(), 8);
  EXPECT_EQ(half.role_counts()["nic"], 4);
}

// Expert parallelism of 64 with two pipeline stages on two NVL72 racks: on every GPU of each rack the
// second stage's ranks 64..127 straddle the racks and its all-to-all crosses InfiniBand; on 64 of each
// rack's GPUs both stages' EP groups stay on NVLink, so the exposed all-to-all time falls.
TEST(DevicesUsed, KeepsAnExpertGroupOnOneRack) {
  workload::Overrides job = podsim::testing::expert_groups_of_64_in_two_stages();
  auto run = [&](const topology::Overrides& sets) {
    auto topo = preset("dgx-gb200-superpod", sets);
    auto model = workload::load_workload_model(podsim::testing::source_path("workloads/qwen3-30b-a3b.yaml"),
                                               job, topo);
    return driver::simulate(topo, *model);
  };
  auto every = run({{"nodes", "2"}});
  auto sixty_four = run({{"nodes", "2"}, {"node.devices_used", "64"}});
  ASSERT_TRUE(every.ok()) << every.status_detail;
  ASSERT_TRUE(sixty_four.ok()) << sixty_four.status_detail;
  EXPECT_EQ(every.devices(), 128);
  EXPECT_EQ(sixty_four.devices(), 128);
  double ep_every = every.mean[workload::Category::ep], ep_64 = sixty_four.mean[workload::Category::ep];
  EXPECT_GT(ep_every, 1.5 * ep_64) << ep_every << " vs " << ep_64;
  EXPECT_LT(sixty_four.step_time(), every.step_time());
  std::string text = report::human_summary(sixty_four);
  EXPECT_NE(text.find("the job runs on 64 of each server's 72 GPUs"), std::string::npos) << text;
  EXPECT_EQ(text.find("hint"), std::string::npos) << text;
  // On every GPU the run says which groups straddle the racks and what keeps them on one.
  std::string hint = report::human_summary(every);
  EXPECT_EQ(hint.find("the job runs on"), std::string::npos) << hint;
  EXPECT_NE(hint.find("1 of the 2 expert-parallel groups of 64 ranks span two NVLink domains"),
            std::string::npos)
      << hint;
  EXPECT_NE(hint.find("--set topology.node.devices_used=64"), std::string::npos) << hint;
}

// Groups that fit a server's NVLink domain and divide it get no hint; groups larger than a domain (EP 16
// over two DGX H100) cross the NICs by layout and get none either; a TP group of 8 on NVL72 racks whose
// stages hold 64 ranks never straddles (72 is a multiple of 8).
TEST(DevicesUsed, HintsOnlyWhereAGroupCouldFitOneDomain) {
  auto hints = [](const char* topology, const workload::Overrides& job, const topology::Overrides& sets) {
    auto topo = preset(topology, sets);
    auto model = workload::load_workload_model(podsim::testing::source_path("workloads/qwen3-30b-a3b.yaml"),
                                               job, topo);
    auto r = driver::simulate(topo, *model);
    EXPECT_TRUE(r.ok()) << r.status_detail;
    return r.plan.hints;
  };
  workload::Overrides small = {
      {"model.layers", "2"}, {"model.kv_heads", "8"},          {"parallel.sequence_parallel", "true"},
      {"parallel.pp", "1"},  {"parallel.virtual_stages", "1"}, {"training.micro_batch", "1"}};
  auto with = [&](workload::Overrides extra) {
    extra.insert(extra.begin(), small.begin(), small.end());
    return extra;
  };
  EXPECT_TRUE(hints("dgx-h100-superpod",
                    with({{"parallel.tp", "1"},
                          {"parallel.dp", "16"},
                          {"parallel.ep", "16"},
                          {"training.global_batch", "16"}}),
                    {{"nodes", "2"}})
                  .empty());
  EXPECT_TRUE(hints("dgx-h100-superpod",
                    with({{"parallel.tp", "1"},
                          {"parallel.dp", "16"},
                          {"parallel.ep", "8"},
                          {"training.global_batch", "16"}}),
                    {{"nodes", "2"}})
                  .empty());
  EXPECT_TRUE(hints("dgx-gb200-superpod",
                    with({{"parallel.tp", "8"},
                          {"parallel.dp", "16"},
                          {"parallel.ep", "1"},
                          {"training.global_batch", "16"}}),
                    {{"nodes", "2"}})
                  .empty());
  // TP 8 on servers of 12 GPUs (one NIC each): every third group straddles; 8 of each server's fixes it.
  auto tp = hints(
      "dgx-h100-superpod",
      with(
          {{"parallel.tp", "8"}, {"parallel.dp", "3"}, {"parallel.ep", "1"}, {"training.global_batch", "3"}}),
      {{"nodes", "2"}, {"node.devices", "12"}, {"node.nics", "12"}});
  ASSERT_EQ(tp.size(), 1u);
  EXPECT_NE(tp[0].find("1 of the 3 tensor-parallel groups of 8 ranks"), std::string::npos) << tp[0];
  EXPECT_NE(tp[0].find("devices_used=8"), std::string::npos) << tp[0];
}
