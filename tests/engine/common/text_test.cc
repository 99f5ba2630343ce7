// engine/common/text.h and message_text.h: UTF-8 validity, control characters, the
// terminal escaping every printer of agent text uses, and the hello's field checks by
// reflection (the coordinator's refusal and the agent's own check).
#include "engine/common/text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/common/duration_text.h"
#include "engine/common/message_text.h"
#include "engine/common/name_rule.h"
#include "engine/report/report.h"
#include "engine/report/text_table.h"
#include "fleetmark/v1/agent.pb.h"

namespace fleetmark {
namespace {

TEST(TextTest, NaturalLessOrdersNumbersByValue) {
  EXPECT_TRUE(NaturalLess("cpu_ns=20000", "cpu_ns=100000"));
  EXPECT_FALSE(NaturalLess("cpu_ns=100000", "cpu_ns=20000"));
  EXPECT_TRUE(NaturalLess("batch/synthetic[cpu_ns=9,wait_us=100]", "batch/synthetic[cpu_ns=10,wait_us=1]"));
  EXPECT_TRUE(NaturalLess("x2", "x10"));
  EXPECT_TRUE(NaturalLess("x1", "x01"));  // equal values: the shorter run first
  EXPECT_TRUE(NaturalLess("ab", "abc"));
  EXPECT_TRUE(NaturalLess("a9b", "a10"));
  EXPECT_FALSE(NaturalLess("same7", "same7"));
  std::vector<std::string> ids = {"w=1000", "w=10", "w=316", "w=100", "w=3162", "v"};
  std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  EXPECT_EQ(ids, (std::vector<std::string>{"v", "w=10", "w=100", "w=316", "w=1000", "w=3162"}));
}

TEST(TextTest, Utf8Validity) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("µs ± 2% × 3 · 😀"));
  EXPECT_FALSE(IsValidUtf8("\xc3\x28"));          // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("abc\xe2\x82"));       // cut short
  EXPECT_FALSE(IsValidUtf8("\x9b"));              // lone continuation byte
}

TEST(TextTest, ControlCharactersAndProblems) {
  EXPECT_TRUE(IsPrintableText("Cortex-A76 <b>&amp;</b> µ", false));
  EXPECT_FALSE(IsPrintableText(std::string("a\0b", 3), false));
  EXPECT_FALSE(IsPrintableText("a\x1b[1A", false));
  EXPECT_FALSE(IsPrintableText("del\x7f", false));
  EXPECT_FALSE(IsPrintableText("c1 \xc2\x9b", false));
  EXPECT_FALSE(IsPrintableText("line\n", false));
  EXPECT_TRUE(IsPrintableText("line\n\ttab", true));
  EXPECT_EQ(TextProblem("fine µ", false), std::nullopt);
  EXPECT_EQ(TextProblem("ab\x1b", false), "control character U+001B at byte 2");
  EXPECT_EQ(TextProblem("\xc2\x85", false), "control character U+0085 at byte 0");
  EXPECT_EQ(TextProblem("ok\xff", false), "invalid UTF-8 at byte 2");
  EXPECT_EQ(TextProblem("a\nb", true), std::nullopt);
}

// Bidirectional controls are invisible and reorder what follows ("ab\u202ecd" shows
// as "abdc"): refused like control characters, the code point named.
TEST(TextTest, BidiControlsAreNotPrintable) {
  for (const char* bidi :
       {"\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"}) {
    EXPECT_FALSE(IsPrintableText(std::string("ab") + bidi + "cd", true)) << bidi;
  }
  EXPECT_EQ(TextProblem("ab\u202e"
                        "cd",
                        false),
            "bidirectional control U+202E at byte 2");
  EXPECT_EQ(TextProblem("\u2066", true), "bidirectional control U+2066 at byte 0");
  // Their neighbours stay printable: zero-width joiner, en dash, U+2070.
  EXPECT_TRUE(IsPrintableText("\u200d \u2013 \u2070 \u2065", false));
  EXPECT_EQ(TextProblem("\u200dx", false), std::nullopt);
}

TEST(TextTest, StorableTextCutsAtACharacterAndReplacesWhatTextCannotHold) {
  EXPECT_EQ(StorableText("plain", 100), "plain");
  EXPECT_EQ(StorableText("plain", 3), "pla");
  // "é" is 2 bytes: a cut at 2 would split it, so it stops before.
  EXPECT_EQ(StorableText("x\xc3\xa9y", 2), "x");
  EXPECT_EQ(StorableText("x\xc3\xa9y", 3), "x\xc3\xa9");
  // NUL and a byte that is not UTF-8 become U+FFFD (3 bytes).
  EXPECT_EQ(StorableText(std::string("a\0b", 3), 100),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(StorableText("a\xff"
                         "b",
                         100),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(StorableText("a\xff", 3), "a") << "no room for the replacement";
  EXPECT_TRUE(IsValidUtf8(StorableText("\xf0\x9f\x98\x80\xf0\x9f", 100)));
  EXPECT_EQ(StorableText("", 0), "");
}

TEST(TextTest, EscapeForTerminalKeepsTextAndEscapesControls) {
  EXPECT_EQ(EscapeForTerminal("\x1b]0;pwned\x07\x1b[1A"), "\\x1b]0;pwned\\x07\\x1b[1A");
  EXPECT_EQ(EscapeForTerminal("µs <b> ok"), "µs <b> ok");
  EXPECT_EQ(EscapeForTerminal("a\nb\tc"), "a\\x0ab\\x09c");
  EXPECT_EQ(EscapeForTerminal("csi \xc2\x9b"
                              "2J"),
            "csi \\xc2\\x9b2J");
  EXPECT_EQ(EscapeForTerminal("bad \xff\xfe"), "bad \\xff\\xfe");
  EXPECT_EQ(EscapeForTerminal(std::string("nul\0", 4)), "nul\\x00");
  EXPECT_EQ(EscapeForTerminal("abcdef", 3), "abc...");
  EXPECT_EQ(EscapeForTerminal("ab\xc2\xb5", 3), "ab...");  // never cuts a character in two
  for (int c = 0; c < 256; ++c) {
    const std::string out = EscapeForTerminal(std::string(1, static_cast<char>(c)) + "x");
    for (unsigned char o : out) EXPECT_TRUE(o >= 0x20 && o < 0x7f) << "byte " << c << " -> " << out;
  }
}

// A trial found `fleetmark-agent --name $'\u202egnp.exe'` echoed raw: U+202E (right-to-
// left override) reverses what the terminal prints after it. Format characters are
// escaped; other non-ASCII text is kept.
TEST(TextTest, EscapeForTerminalEscapesFormatCharacters) {
  EXPECT_EQ(EscapeForTerminal("a\u202e"
                              "exe.txt"),
            "a\\u202eexe.txt");
  EXPECT_EQ(EscapeForTerminal("\u2066x\u2069"), "\\u2066x\\u2069");     // isolates
  EXPECT_EQ(EscapeForTerminal("zero\u200bwidth"), "zero\\u200bwidth");  // zero-width space
  EXPECT_EQ(EscapeForTerminal("\ufeffbom"), "\\ufeffbom");
  EXPECT_EQ(EscapeForTerminal("tag\U000e0041"), "tag\\ue0041");
  EXPECT_EQ(EscapeForTerminal("soft\u00adhyphen"), "soft\\u00adhyphen");
  EXPECT_EQ(EscapeForTerminal("µs é 中 \u2013"), "µs é 中 \u2013");  // not format characters
}

// Trial of 2026-12-02, finding 10: `schedules create 'sch😀'` was refused with
// got "sch\xf0\x9f\x98\x80" (7 characters); valid UTF-8 is shown as its characters and
// counted in characters, control and bidirectional characters are still escaped.
TEST(TextTest, NameRuleMessageShowsCharactersAndCountsThem) {
  EXPECT_EQ(CharacterCount("sch\xf0\x9f\x98\x80"), 4u);
  EXPECT_EQ(CharacterCount("caf\xc3\xa9"), 4u);
  EXPECT_EQ(CharacterCount("a\xff"
                           "b"),
            3u);  // a byte that is not UTF-8 counts 1
  EXPECT_EQ(CharacterCount(""), 0u);
  EXPECT_EQ(NameRuleMessage("schedule.name", "sch\xf0\x9f\x98\x80"),
            "schedule.name: 1 to 64 characters of [A-Za-z0-9._-], got \"sch\xf0\x9f\x98\x80\" (4 characters)");
  EXPECT_EQ(NameRuleMessage("name", "a\x1b[2J\xe2\x80\xae", 8),
            "name: 1 to 8 characters of [A-Za-z0-9._-], got \"a\\x1b[2J\\u202e\" (6 characters)");
  EXPECT_EQ(NameRuleMessage("name", "!"), "name: 1 to 64 characters of [A-Za-z0-9._-], got \"!\" (1 character)");
}

// Issue 32, item 12: the coordinator's gRPC errors echoed a 6 MB value whole.
TEST(TextTest, CutLongEchoesCutsEachLongQuotedValueAndTheWhole) {
  EXPECT_EQ(CutLongEchoes("plan.name: got \"short\""), "plan.name: got \"short\"");
  const std::string big(6 << 20, 'x');
  EXPECT_EQ(CutLongEchoes("a: got \"" + big + "\", b: got \"ok\""),
            "a: got \"" + std::string(kMaxEchoBytes, 'x') + "...\", b: got \"ok\"");
  EXPECT_EQ(CutLongEchoes("open: \"" + big), "open: \"" + std::string(kMaxEchoBytes, 'x') + "...");
  // Not quoted: the whole message is cut.
  const std::string unquoted = CutLongEchoes("value " + big);
  EXPECT_EQ(unquoted.size(), kMaxErrorMessageBytes + 3);
  EXPECT_EQ(unquoted.substr(unquoted.size() - 3), "...");
  EXPECT_EQ(CutLongEchoes(""), "");
}

TEST(TextTest, IsUuid) {
  EXPECT_TRUE(IsUuid("44444444-4444-4444-8444-444444444444"));
  EXPECT_TRUE(IsUuid("ABCDEF01-2345-6789-abcd-ef0123456789"));
  EXPECT_FALSE(IsUuid(""));
  EXPECT_FALSE(IsUuid("44444444-4444-4444-8444-44444444444"));
  EXPECT_FALSE(IsUuid("44444444x4444-4444-8444-444444444444"));
  EXPECT_FALSE(IsUuid("4444444g-4444-4444-8444-444444444444"));
  EXPECT_FALSE(IsUuid("'; DROP TABLE jobs; --"));
}

// Terminal columns: glibc's wcwidth under C.UTF-8, not a count of code points.
TEST(TextTest, DisplayWidthCountsTerminalColumns) {
  EXPECT_EQ(DisplayWidth(""), 0u);
  EXPECT_EQ(DisplayWidth("big-x86"), 7u);
  EXPECT_EQ(DisplayWidth("1.23 µs ± 2% × 3 · R²"), 21u);  // narrow symbols: one column each
  EXPECT_EQ(DisplayWidth("测试机"), 6u);                  // CJK ideographs: two columns each
  EXPECT_EQ(DisplayWidth("ｆｕｌｌ"), 8u);                // fullwidth Latin
  EXPECT_EQ(DisplayWidth("한국"), 4u);                    // Hangul syllables
  EXPECT_EQ(DisplayWidth("e\u0301"), 1u);                 // e + COMBINING ACUTE ACCENT
  EXPECT_EQ(DisplayWidth("Z\u0351\u0352a"), 2u);          // several combining marks on one letter
  EXPECT_EQ(DisplayWidth("a\u200bb"), 2u);                // ZERO WIDTH SPACE
  EXPECT_EQ(DisplayWidth("😀"), 2u);                       // emoji (presentation by default)
  EXPECT_EQ(DisplayWidth("phone 📱"), 8u);
  EXPECT_EQ(DisplayWidth("\xff"), 1u);  // not UTF-8: one column (tables escape it first)
}

TEST(TextTest, PrefixOfWidthCutsAtCharacterBoundaries) {
  EXPECT_EQ(PrefixOfWidth("abcdef", 3), "abc");
  EXPECT_EQ(PrefixOfWidth("测试机", 3), "测");  // a wide character does not fit half
  EXPECT_EQ(PrefixOfWidth("测试机", 4), "测试");
  EXPECT_EQ(PrefixOfWidth("e\u0301x", 1), "e\u0301");  // the mark stays with its letter
  EXPECT_EQ(PrefixOfWidth("ab", 10), "ab");
  EXPECT_EQ(PrefixOfWidth("ab", 0), "");
}

// Cells with wide and combining characters line up: every row's next column starts at
// the same display column.
TEST(TextTest, TablesAlignByDisplayWidth) {
  report::TextTable table({{"agent"}, {"median", report::Align::kRight}, {"status"}});
  table.AddRow({"big-x86", "1.00 ms", "ok"});
  table.AddRow({"测试机-手机", "2.00 ms", "ok"});
  table.AddRow({"Ame\u0301lie", "3.00 ms", "ok"});
  table.AddRow({"phone 📱", "4.00 ms", "ok"});
  const std::string text = table.Render();
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_EQ(lines.size(), 6u) << text;
  const size_t end_of_median = DisplayWidth(lines[0].substr(0, lines[0].find("median") + 6));
  for (size_t i = 2; i < lines.size(); ++i) {
    EXPECT_EQ(DisplayWidth(lines[i].substr(0, lines[i].find(" ms") + 3)), end_of_median) << text;
  }
}

TEST(TextTest, TablesEscapeTheirCells) {
  report::TextTable table({{"name"}, {"cpu \x1b[2J"}});
  table.AddRow({"box", "\x1b]0;pwned\x07"});
  const std::string out = table.Render();
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_NE(out.find("\\x1b]0;pwned\\x07"), std::string::npos) << out;
  // Columns align on the escaped text.
  EXPECT_EQ(out, "name  cpu \\x1b[2J\n-----------------\nbox   \\x1b]0;pwned\\x07\n");
}

TEST(TextTest, ReportHeadingEscapesHostText) {
  v1::RunReport report;
  report.mutable_host()->set_cpu_model("evil\x1b[1A");
  report.mutable_host()->set_hostname("h\x07");
  v1::CaseResult* r = report.add_results();
  r->mutable_spec()->set_workload("arith\x1b");
  r->mutable_spec()->mutable_strategy()->set_name("direct");
  auto text = report::FormatReport(report, report::ReportFormat::kTable);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->find('\x1b'), std::string::npos) << *text;
  EXPECT_EQ(text->find('\x07'), std::string::npos) << *text;
  EXPECT_NE(text->find("evil\\x1b[1A"), std::string::npos) << *text;
}

v1::Hello GoodHello() {
  v1::Hello hello;
  hello.set_agent_name("pixel-7");
  hello.set_enrollment_token(std::string(64, 'a'));
  hello.mutable_host()->set_cpu_model("Cortex-X3 <b>&</b>");
  hello.mutable_host()->add_core_kinds()->set_name("performance");
  hello.mutable_host()->add_notes(std::string(1024, 'n'));
  hello.add_strategies("fiber");
  (*hello.mutable_labels())["rack"] = "b";
  return hello;
}

std::string HelloProblem(const v1::Hello& hello) {
  absl::Status status = CheckMessageText(hello, "hello", HelloTextRules());
  return status.ok() ? "" : std::string(status.message());
}

TEST(MessageTextTest, EveryStringOfAHelloIsCheckedAndNamed) {
  EXPECT_EQ(HelloProblem(GoodHello()), "");
  v1::Hello h = GoodHello();
  h.mutable_host()->set_cpu_model(std::string("Xeon\0x", 6));
  EXPECT_EQ(HelloProblem(h),
            "hello.host.cpu_model: at most 256 bytes of printable UTF-8 (no control characters), got control "
            "character U+0000 at byte 4");
  h = GoodHello();
  h.mutable_host()->mutable_core_kinds(0)->set_microarchitecture("\xff");  // set without a parse: not checked
  EXPECT_EQ(HelloProblem(h),
            "hello.host.core_kinds[0].microarchitecture: at most 256 bytes of printable UTF-8 (no control "
            "characters), got invalid UTF-8 at byte 0");
  h = GoodHello();
  h.add_strategies(std::string(257, 's'));
  EXPECT_EQ(HelloProblem(h),
            "hello.strategies[1]: at most 256 bytes of printable UTF-8 (no control characters), got 257 bytes");
  h = GoodHello();
  h.mutable_host()->add_notes(std::string(1025, 'n'));
  EXPECT_EQ(HelloProblem(h),
            "hello.host.notes[1]: at most 1024 bytes of printable UTF-8 (no control characters), got 1025 bytes");
  h = GoodHello();
  (*h.mutable_labels())["rack"] = std::string(64, 'v');
  EXPECT_EQ(HelloProblem(h),
            "hello.labels[\"rack\"]: at most 63 bytes of printable UTF-8 (no control characters), got 64 bytes");
  h = GoodHello();
  (*h.mutable_labels())["k\x1b"] = "v";
  EXPECT_EQ(HelloProblem(h),
            "hello.labels key \"k\\x1b\": at most 63 bytes of printable UTF-8 (no control characters), got control "
            "character U+001B at byte 1");
  h = GoodHello();
  h.set_enrollment_token("secret\x01value");
  const std::string problem = HelloProblem(h);
  EXPECT_NE(problem.find("hello.enrollment_token: at most 4096 bytes"), std::string::npos) << problem;
  EXPECT_EQ(problem.find("secret"), std::string::npos) << "a secret was quoted: " << problem;
}

TEST(MessageTextTest, SanitizeMakesDetectedHostTextPass) {
  v1::Hello h = GoodHello();
  h.mutable_host()->set_device_model(std::string("Raspberry Pi\0", 13));
  h.mutable_host()->set_os(std::string(5000, 'o'));
  h.mutable_host()->mutable_core_kinds(0)->set_microarchitecture("A76\x1b[2J");
  EXPECT_EQ(SanitizeMessageText(h.mutable_host(), HelloTextRules()), 3);
  EXPECT_EQ(HelloProblem(h), "");
  EXPECT_EQ(h.host().device_model(), "Raspberry Pi\\x00");
  EXPECT_EQ(h.host().core_kinds(0).microarchitecture(), "A76\\x1b[2J");
  EXPECT_LE(h.host().os().size(), 256u);
  EXPECT_EQ(h.host().cpu_model(), "Cortex-X3 <b>&</b>");  // fine text is left alone
  EXPECT_EQ(SanitizeMessageText(h.mutable_host(), HelloTextRules()), 0);
}

// The one name rule of agents, schedules and label keys (engine/common/name_rule.h).
TEST(NameRuleTest, LettersDigitsDotUnderscoreDashOneTo64) {
  EXPECT_TRUE(IsName("board-7.rack_2"));
  EXPECT_TRUE(IsName(std::string(64, 'a')));
  EXPECT_FALSE(IsName(std::string(65, 'a')));
  EXPECT_FALSE(IsName(""));
  for (const char* bad : {"a b", "a/b", "a:b", "\xc3\xa9t\xc3\xa9", "a\nb", "x+y"}) {
    EXPECT_FALSE(IsName(bad)) << bad;
  }
  EXPECT_TRUE(IsName(std::string(63, 'k'), 63));
  EXPECT_FALSE(IsName(std::string(64, 'k'), 63));
}

// Issue 32, item 12: an agent could be named `--all`, which `agents remove --all` then
// reads as a flag. A name never starts with '-' (a '-' inside stays allowed).
TEST(NameRuleTest, ANameDoesNotStartWithADash) {
  for (const char* bad : {"--all", "-", "-a", "--"}) {
    EXPECT_FALSE(IsName(bad)) << bad;
    EXPECT_FALSE(IsName(bad, 63)) << bad;  // label keys too
  }
  EXPECT_TRUE(IsName("a-"));
  EXPECT_TRUE(IsName("a--all"));
  EXPECT_EQ(NameRuleMessage("hello.agent_name", "--all"),
            "hello.agent_name: 1 to 64 characters of [A-Za-z0-9._-], got \"--all\" (5 characters), which starts "
            "with '-' (read as a flag)");
  EXPECT_EQ(NameRuleMessage("name", "a b"), "name: 1 to 64 characters of [A-Za-z0-9._-], got \"a b\" (3 characters)");
}

}  // namespace
}  // namespace fleetmark

namespace fleetmark {
namespace {

// engine/common/duration_text.h: the CLI's rounded durations.
TEST(DurationTextTest, RoundsToTheSecondWithAtMostTwoUnits) {
  EXPECT_EQ(RoundedDuration(absl::Seconds(208) + absl::Nanoseconds(509937623)), "3m29s");
  EXPECT_EQ(RoundedDuration(absl::Seconds(208) + absl::Milliseconds(499)), "3m28s");
  EXPECT_EQ(RoundedDuration(absl::Milliseconds(40)), "0s");
  EXPECT_EQ(RoundedDuration(absl::Seconds(59.6)), "1m00s");
  EXPECT_EQ(RoundedDuration(absl::Seconds(45)), "45s");
  EXPECT_EQ(RoundedDuration(absl::Hours(1) + absl::Minutes(2) + absl::Seconds(31)), "1h03m");
  EXPECT_EQ(RoundedDuration(absl::Hours(30)), "30h00m");
  EXPECT_EQ(RoundedDuration(-absl::Seconds(3)), "-3s");
  EXPECT_EQ(RoundedDuration(-absl::Milliseconds(3)), "0s");
  EXPECT_EQ(RoundedDuration(absl::InfiniteDuration()), "inf");
}

}  // namespace
}  // namespace fleetmark
