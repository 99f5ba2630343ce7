#include "engine/plan/text_scan.h"

#include <map>
#include <vector>

#include "fleetmark/v1/plan.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace fleetmark::engine {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::io::Tokenizer;

class SilentErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, int, const std::string&) override {}
};

// One open message: its type (null when unknown), how often each repeated field
// occurred so far, and whether it is an element of a `[...]` list.
struct Frame {
  const Descriptor* descriptor = nullptr;
  std::map<std::string, int> counts;
  bool list_element = false;
};

enum class State { kName, kAfterName, kValue, kList };

class Scanner {
 public:
  explicit Scanner(std::optional<SourcePosition> stop_at) : stop_at_(stop_at) {
    frames_.push_back({v1::Plan::descriptor(), {}, false});
  }

  TextScan Scan(std::string_view text) {
    google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
    SilentErrors errors;
    Tokenizer tokenizer(&input, &errors);
    tokenizer.set_comment_style(Tokenizer::SH_COMMENT_STYLE);
    while (tokenizer.Next()) {
      const Tokenizer::Token& token = tokenizer.current();
      if (stop_at_ &&
          (token.line > stop_at_->line || (token.line == stop_at_->line && token.column >= stop_at_->column))) {
        result_.path_at_stop = path_;
        if (state_ != State::kName && has_current_) result_.path_at_stop.push_back(current_);
        return std::move(result_);
      }
      Consume(token);
    }
    result_.path_at_stop = path_;
    return std::move(result_);
  }

 private:
  static bool Is(const Tokenizer::Token& t, const char* symbol) {
    return t.type == Tokenizer::TYPE_SYMBOL && t.text == symbol;
  }

  // A field's name token, or (`element`) a list element, which replaces the position of
  // its field's name for index 0.
  void Record(const Tokenizer::Token& token, bool element = false) {
    FieldPath path = path_;
    path.push_back(current_);
    const SourcePosition position{token.line + 1, token.column + 1};
    if (element) {
      result_.positions.insert_or_assign(FormatFieldPath(path), position);
    } else {
      result_.positions.emplace(FormatFieldPath(path), position);
    }
  }

  void OpenMessage(bool list_element) {
    Frame frame;
    frame.descriptor = current_field_ != nullptr ? current_field_->message_type() : nullptr;
    frame.list_element = list_element;
    frames_.push_back(std::move(frame));
    path_.push_back(current_);
    has_current_ = false;
    state_ = State::kName;
  }

  void CloseMessage() {
    if (frames_.size() <= 1) return;  // unbalanced: the parser reports it
    const bool list_element = frames_.back().list_element;
    frames_.pop_back();
    current_ = path_.back();
    path_.pop_back();
    has_current_ = true;
    current_field_ =
        frames_.back().descriptor != nullptr ? frames_.back().descriptor->FindFieldByName(current_.field) : nullptr;
    state_ = list_element ? State::kList : State::kName;
  }

  void Consume(const Tokenizer::Token& token) {
    switch (state_) {
      case State::kName:
        if (token.type == Tokenizer::TYPE_IDENTIFIER) {
          Frame& frame = frames_.back();
          current_field_ = frame.descriptor != nullptr ? frame.descriptor->FindFieldByName(token.text) : nullptr;
          const bool repeated = current_field_ != nullptr && current_field_->is_repeated();
          current_ = {token.text, repeated ? frame.counts[token.text]++ : -1};
          has_current_ = true;
          Record(token);
          state_ = State::kAfterName;
        } else if (Is(token, "}") || Is(token, ">")) {
          CloseMessage();
        }
        return;
      case State::kAfterName:
        if (Is(token, ":")) {
          state_ = State::kValue;
        } else if (Is(token, "{") || Is(token, "<")) {
          OpenMessage(false);
        } else if (Is(token, "[")) {  // a message list may omit the colon
          state_ = State::kList;
          first_element_ = true;
        } else {
          state_ = State::kName;
          Consume(token);
        }
        return;
      case State::kValue:
        if (Is(token, "[")) {
          state_ = State::kList;
          first_element_ = true;
        } else if (Is(token, "{") || Is(token, "<")) {
          OpenMessage(false);
        } else if (!Is(token, "-")) {
          state_ = State::kName;
        }
        return;
      case State::kList:
        if (Is(token, "]")) {
          state_ = State::kName;
        } else if (!Is(token, ",") && !Is(token, "-")) {
          if (!first_element_ && current_.index >= 0) {
            current_.index = frames_.back().counts[current_.field]++;
          }
          first_element_ = false;
          Record(token, /*element=*/true);
          if (Is(token, "{") || Is(token, "<")) OpenMessage(true);
        }
        return;
    }
  }

  std::optional<SourcePosition> stop_at_;
  std::vector<Frame> frames_;
  FieldPath path_;
  PathElement current_;
  bool has_current_ = false;
  const FieldDescriptor* current_field_ = nullptr;
  State state_ = State::kName;
  bool first_element_ = false;
  TextScan result_;
};

}  // namespace

TextScan ScanPlanText(std::string_view text, std::optional<SourcePosition> stop_at) {
  return Scanner(stop_at).Scan(text);
}

}  // namespace fleetmark::engine
