// The implementation and schedule name tables (collectives/impl_id.h) and the registry built from
// the support matrix (collectives/implementations.def): every name round-trips through its id,
// unknown names are refused with the valid list, and the registry's rows agree with the tables.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "collectives/implementation.h"
#include "collectives/impl_id.h"
#include "tests/unit/expect_error.h"

namespace ccbench {
namespace {

TEST(ImplId, EveryIdRoundTripsItsNameAndNamesAreDistinct) {
  std::set<std::string> seen;
  for (ImplId id : all_impl_ids()) {
    const std::string n(name(id));
    ASSERT_FALSE(n.empty());
    EXPECT_NE(n, "?");
    EXPECT_TRUE(seen.insert(n).second) << n << " twice";
    ASSERT_TRUE(parse_impl_id(n)) << n;
    EXPECT_EQ(*parse_impl_id(n), id) << n;
    EXPECT_EQ(parse_impl_id_for(n, "--impl"), id) << n;
  }
  EXPECT_EQ(impl_names().size(), all_impl_ids().size());
  EXPECT_EQ(seen.size(), all_impl_ids().size());
}

TEST(ImplId, UnknownNamesAreRefusedWithTheValidListAndTheClosestName) {
  EXPECT_FALSE(parse_impl_id("riing"));
  EXPECT_FALSE(parse_impl_id(""));
  EXPECT_FALSE(parse_impl_id("Ring"));  // no case folding: the rows' impl column is exact
  expect_error([] { parse_impl_id_for("riing", "--impl", ", or all"); }, ExitCode::usage,
               {"--impl: unknown implementation 'riing' (valid: ", valid_implementations().c_str(), ", or all)",
                "did you mean 'ring'"});
  expect_error([] { parse_impl_id_for("nccll", "--baseline"); }, ExitCode::usage,
               {"--baseline: unknown implementation 'nccll'", "did you mean 'nccl'"});
  // The valid list is every name of the table, in its order.
  std::string joined;
  for (const std::string& n : impl_names()) joined += (joined.empty() ? "" : ", ") + n;
  EXPECT_EQ(valid_implementations(), joined);
}

TEST(ModelSchedule, EveryScheduleRoundTripsItsNameAndHierLeaderIsNamedAfterHier) {
  std::set<std::string> seen;
  for (ModelSchedule s : all_model_schedules()) {
    const std::string n = name(s);
    EXPECT_TRUE(seen.insert(n).second) << n << " twice";
    ASSERT_TRUE(parse_model_schedule(n)) << n;
    EXPECT_EQ(*parse_model_schedule(n), s) << n;
  }
  EXPECT_EQ(name(ModelSchedule::hier_leader), std::string(name(ImplId::hier)) + "-leader");
  EXPECT_EQ(name(ModelSchedule::nccl_tree), name(ImplId::nccl_tree));
  EXPECT_FALSE(parse_model_schedule("butterfly"));
  EXPECT_FALSE(parse_model_schedule("mpi"));  // an implementation without a schedule
}

TEST(Registry, RowsAreNamedByTheirIdsAndEveryIdHasARow) {
  std::set<std::pair<ImplId, Device>> rows;
  for (const ImplInfo& i : implementations()) {
    EXPECT_EQ(i.name, name(i.id));
    EXPECT_TRUE(rows.insert({i.id, i.device}).second) << i.name << " twice on " << name(i.device);
    EXPECT_EQ(find_implementation(i.id, i.device), &i);
    EXPECT_EQ(static_cast<bool>(i.make), i.missing.empty()) << i.name;
    EXPECT_EQ(is_nccl(i.id), i.needs == ImplInfo::Needs::nccl) << i.name;
  }
  for (ImplId id : all_impl_ids())
    EXPECT_TRUE(find_implementation(id, Device::cpu) || find_implementation(id, Device::gpu)) << name(id);
}

TEST(Registry, TheModelsSchedulesComeFromTheMatrix) {
  // CPU hier runs the leader scheme, GPU hier the two-level one; NCCL's default is the faster of
  // its ring and tree; implementations the model does not describe have none.
  const auto model = [](ImplId id, Device d) { return find_implementation(id, d)->model; };
  EXPECT_EQ(model(ImplId::hier, Device::cpu), std::vector<ModelSchedule>{ModelSchedule::hier_leader});
  EXPECT_EQ(model(ImplId::hier, Device::gpu), std::vector<ModelSchedule>{ModelSchedule::hier});
  EXPECT_EQ(model(ImplId::nccl, Device::gpu),
            (std::vector<ModelSchedule>{ModelSchedule::nccl_ring, ModelSchedule::nccl_tree}));
  EXPECT_TRUE(model(ImplId::mpi, Device::cpu).empty());
  EXPECT_TRUE(model(ImplId::ce, Device::gpu).empty());
  // Every schedule predicts some implementation.
  for (ModelSchedule s : all_model_schedules()) {
    bool used = false;
    for (const ImplInfo& i : implementations())
      for (ModelSchedule m : i.model) used = used || m == s;
    EXPECT_TRUE(used) << name(s);
  }
}

}  // namespace
}  // namespace ccbench
