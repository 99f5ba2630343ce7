#include "coordinator/service/selector.h"

#include <gtest/gtest.h>

namespace fleetmark::service {
namespace {

v1::HostInfo Host(const std::string& arch, uint32_t cores, uint32_t threads, int classes, bool smt) {
  v1::HostInfo host;
  host.set_arch(arch);
  host.set_physical_cores(cores);
  host.set_logical_cpus(threads);
  host.set_smt(smt);
  host.set_memory_bytes(8ull << 30);
  const char* names[] = {"performance", "efficiency", "mid"};
  for (int i = 0; i < classes; ++i) host.add_core_classes()->set_name(names[i]);
  return host;
}

TEST(SelectorTest, EmptyMatchesEverything) {
  auto s = Selector::Parse("");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->empty());
  EXPECT_TRUE(s->Matches("any", Host("x86_64", 4, 8, 1, true), {}));
}

// A name=VALUE term without glob characters pins a selection to one agent name.
TEST(SelectorTest, ExactNameOnlyForALiteralNameTerm) {
  EXPECT_EQ(Selector::Parse("name=pixel-7")->ExactName(), "pixel-7");
  EXPECT_EQ(Selector::Parse("arch=arm64, name = pixel-7 ,label:rack=b")->ExactName(), "pixel-7");
  for (const char* other : {"", "all", "name=pixel-*", "name=pixel-?", "name=pixel-[78]", "name=pixel-[!0-7]",
                            "name!=pixel-7", "label:name=pixel-7", "arch=arm64"}) {
    auto s = Selector::Parse(other);
    ASSERT_TRUE(s.ok()) << other << ": " << s.status();
    EXPECT_FALSE(s->ExactName().has_value()) << other;
  }
}

TEST(SelectorTest, AllAloneMatchesEverything) {
  for (const char* all : {"all", " all ", "ALL"}) {
    auto s = Selector::Parse(all);
    ASSERT_TRUE(s.ok()) << all << ": " << s.status();
    EXPECT_TRUE(s->empty()) << all;
    EXPECT_TRUE(s->Matches("any", Host("aarch64", 2, 2, 1, false), {})) << all;
    EXPECT_TRUE(s->Matches("other", Host("x86_64", 64, 128, 2, true), {{"rack", "b"}})) << all;
  }
  // Blank selectors stay "every agent" (stored schedules and runs use "").
  EXPECT_TRUE(Selector::Parse(" \t")->empty());
}

TEST(SelectorTest, AllWithOtherTermsIsRefused) {
  for (const char* bad : {"all,arch=arm64", "arch=arm64, all", "all,all"}) {
    auto s = Selector::Parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.status().message().find("\"all\" selects every agent and stands alone"), std::string::npos)
        << s.status();
  }
  // A key named like it is still a key error, and a lone word hints at `all`.
  auto word = Selector::Parse("everything");
  ASSERT_FALSE(word.ok());
  EXPECT_NE(word.status().message().find("or `all` alone"), std::string::npos) << word.status();
}

TEST(SelectorTest, ArchAliasesAndCommaIsAnd) {
  auto s = Selector::Parse("arch=arm64, cores>=8");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->terms().size(), 2u);
  EXPECT_TRUE(s->Matches("board", Host("aarch64", 8, 8, 2, false), {}));
  EXPECT_FALSE(s->Matches("board", Host("aarch64", 4, 4, 2, false), {}));  // cores < 8
  EXPECT_FALSE(s->Matches("host", Host("x86_64", 16, 32, 1, true), {}));   // arch
}

TEST(SelectorTest, KindLabelNameAndOperators) {
  const v1::HostInfo hybrid = Host("x86_64", 14, 20, 2, true);
  const v1::HostInfo uniform = Host("x86_64", 4, 4, 1, false);
  std::map<std::string, std::string> rack_b = {{"rack", "b"}};
  EXPECT_TRUE(Selector::Parse("kind=hybrid")->Matches("h", hybrid, {}));
  EXPECT_FALSE(Selector::Parse("kind=hybrid")->Matches("u", uniform, {}));
  EXPECT_TRUE(Selector::Parse("kind=uniform")->Matches("u", uniform, {}));
  EXPECT_TRUE(Selector::Parse("kind=smt")->Matches("h", hybrid, {}));
  EXPECT_TRUE(Selector::Parse("kind=efficiency")->Matches("h", hybrid, {}));
  // An agent restricted away from its efficiency cores (the class not available there).
  v1::HostInfo restricted = hybrid;
  for (v1::CoreKind& c : *restricted.mutable_core_classes()) {
    if (c.name() != "efficiency") continue;
    for (uint32_t cpu = 12; cpu < 20; ++cpu) c.add_machine_cpus(cpu);
    c.clear_cpus();
  }
  EXPECT_FALSE(Selector::Parse("kind=efficiency")->Matches("h", restricted, {}));
  EXPECT_TRUE(Selector::Parse("kind=hybrid")->Matches("h", restricted, {}));
  EXPECT_TRUE(Selector::Parse("label:rack=b")->Matches("u", uniform, rack_b));
  EXPECT_FALSE(Selector::Parse("label:rack=b")->Matches("u", uniform, {{"rack", "a"}}));
  EXPECT_FALSE(Selector::Parse("label:rack=b")->Matches("u", uniform, {}));
  EXPECT_TRUE(Selector::Parse("label:rack!=b")->Matches("u", uniform, {}));
  EXPECT_TRUE(Selector::Parse("name=pixel-7")->Matches("pixel-7", uniform, {}));
  EXPECT_FALSE(Selector::Parse("name=pixel-7")->Matches("pixel-8", uniform, {}));
  EXPECT_TRUE(Selector::Parse("name=pixel-*")->Matches("pixel-8", uniform, {}));
  EXPECT_TRUE(Selector::Parse("threads>4")->Matches("h", hybrid, {}));
  EXPECT_FALSE(Selector::Parse("threads<4")->Matches("u", uniform, {}));
  EXPECT_TRUE(Selector::Parse("threads<=4")->Matches("u", uniform, {}));
  EXPECT_TRUE(Selector::Parse("cores!=5")->Matches("u", uniform, {}));
  EXPECT_TRUE(Selector::Parse("memory_gib>=8")->Matches("u", uniform, {}));
}

TEST(SelectorTest, UnknownKeyNamesKeyAndAllowedKeys) {
  auto s = Selector::Parse("arch=arm64,coers>=8");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(s.status().message());
  EXPECT_NE(message.find("term 2"), std::string::npos) << message;
  EXPECT_NE(message.find("\"coers\""), std::string::npos) << message;
  EXPECT_NE(message.find("allowed keys: arch, cores"), std::string::npos) << message;
}

TEST(SelectorTest, LongInputIsRefusedByItsSizeAndQuotedShort) {
  auto huge = Selector::Parse(std::string(100000, 'a'));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(), "selector: at most 4096 bytes, got 100000");
  // Within the limit, a bad term is quoted cut (and escaped), not echoed whole.
  auto long_term = Selector::Parse(std::string(3000, 'b') + "\x1b=1");
  ASSERT_FALSE(long_term.ok());
  const std::string message(long_term.status().message());
  EXPECT_LT(message.size(), 400u) << message;
  EXPECT_NE(message.find("unknown key \"bbbb"), std::string::npos) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
}

TEST(SelectorTest, MalformedTermsAreErrors) {
  for (const char* bad :
       {"arch", "=arm64", "arch=", "cores>=many", "arch>=arm64", "a=b,,c=d", "label:=x", "cores=8,"}) {
    auto s = Selector::Parse(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

// cores and threads take whole numbers >= 0, memory_gib a finite number >= 0.
TEST(SelectorTest, NumbersOutsideTheirRangeAreRefusedNamingKeyAndRange) {
  for (const char* good : {"cores>=0", "cores>=8", "threads<=2147483647", "memory_gib>=0", "memory_gib>=1.5",
                           "memory_gib<.5", "memory_gib>=1e3"}) {
    auto s = Selector::Parse(good);
    EXPECT_TRUE(s.ok()) << good << ": " << s.status();
  }
  auto s = Selector::Parse("cores>=-1");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "selector term 1 \"cores>=-1\": cores takes a whole number >= 0 (at most 2147483647), got \"-1\"");
  for (const char* bad : {"cores>=-1", "cores>=1.5", "cores<=inf", "cores!=nan", "cores>=+8", "cores>=1e3",
                          "threads<=1e309", "threads<=2147483648", "threads>=99999999999999999999"}) {
    auto s = Selector::Parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.status().message().find("takes a whole number >= 0"), std::string::npos) << s.status();
  }
  for (const char* bad : {"memory_gib>=-0", "memory_gib>=-1", "memory_gib<=inf", "memory_gib!=nan", "memory_gib<=1e309",
                          "memory_gib>=+1", "memory_gib>=0x10"}) {
    auto s = Selector::Parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find("memory_gib takes a finite number >= 0, got"), std::string::npos) << s.status();
  }
}

// A name value is a name or a glob over [A-Za-z0-9._-]; matching is case-sensitive.
TEST(SelectorTest, NameValuesAreNamesOrWellFormedGlobs) {
  for (const char* good : {"name=pixel-7", "name=vm_1.a", "name=pixel-*", "name=p?x", "name=[a-c]m", "name=[!a-c]m",
                           "name=[-a]m", "name=[a-]m", "name!=[0-9]*"}) {
    auto s = Selector::Parse(good);
    EXPECT_TRUE(s.ok()) << good << ": " << s.status();
  }
  for (const char* bad : {"name=\x1b[31mred", "name=a\nb", "name=[", "name=[z-a]m", "name=[]", "name=a]b[", "name=[a",
                          "name=a b", "name=a\\*", "name=a/b", "name=[a*]", "name=\xff"}) {
    auto s = Selector::Parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.status().message().find("name takes an agent name or a glob over [A-Za-z0-9._-]"), std::string::npos)
        << s.status();
    EXPECT_EQ(s.status().message().find('\x1b'), std::string::npos) << s.status();
  }
  auto s = Selector::Parse("name=Pixel-*");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->Matches("Pixel-7", Host("x86_64", 4, 8, 1, true), {}));
  EXPECT_FALSE(s->Matches("pixel-7", Host("x86_64", 4, 8, 1, true), {}));
}

TEST(SelectorTest, MalformedOperatorsNameTheAllowedOnes) {
  for (const char* bad : {"arch==x86_64", "cores=>8", "name=!vm", "cores<>4", "label:rack==b"}) {
    auto s = Selector::Parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.status().message().find("malformed operator"), std::string::npos) << s.status();
    EXPECT_NE(s.status().message().find("= != < <= > >="), std::string::npos) << s.status();
  }
  EXPECT_TRUE(Selector::Parse("arch!=x86_64,cores>=8,threads<=64").ok());
}

TEST(SelectorTest, HealthTermAdmitsByQuarantine) {
  auto plain = Selector::Parse("arch=x86_64");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->AdmitsHealth(false));
  EXPECT_FALSE(plain->AdmitsHealth(true)) << "without a health term quarantined agents are skipped";
  EXPECT_FALSE(plain->has_health_term());
  auto any = Selector::Parse("arch=x86_64, health=any");
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_TRUE(any->AdmitsHealth(true));
  EXPECT_TRUE(any->AdmitsHealth(false));
  EXPECT_EQ(any->terms().size(), 1u) << "health is not a host term";
  auto only = Selector::Parse("health=Quarantined");
  ASSERT_TRUE(only.ok());
  EXPECT_TRUE(only->AdmitsHealth(true));
  EXPECT_FALSE(only->AdmitsHealth(false));
  EXPECT_FALSE(only->empty());
  EXPECT_TRUE(Selector::Parse("health=ok")->has_health_term());
  EXPECT_EQ(Selector::Parse("health=sick").status().message(),
            "selector term 1 \"health=sick\": health is ok, quarantined or any, got \"sick\"");
  EXPECT_EQ(Selector::Parse("health!=ok").status().message(),
            "selector term 1 \"health!=ok\": health takes only = (health=ok, health=quarantined or health=any)");
  EXPECT_EQ(Selector::Parse("health=ok,health=any").status().message(),
            "selector term 2 \"health=any\": health given twice");
}

TEST(SelectorTest, NormalizeArch) {
  EXPECT_EQ(NormalizeArch("AArch64"), "arm64");
  EXPECT_EQ(NormalizeArch("amd64"), "x86_64");
  EXPECT_EQ(NormalizeArch("armv7l"), "arm");
  EXPECT_EQ(NormalizeArch("riscv64"), "riscv64");
}

// Every table's selector column: the selector, "(all online)" for the empty one, and an
// imported run (which no selector picked) says so rather than "(all online)".
TEST(SelectorTextTest, NamesTheEmptySelectorAndImportedRuns) {
  EXPECT_EQ(SelectorText("arch=arm64"), "arch=arm64");
  EXPECT_EQ(SelectorText(""), "(all online)");
  EXPECT_EQ(SelectorText("", /*imported=*/true), "(imported: no selector)");
}

}  // namespace
}  // namespace fleetmark::service
