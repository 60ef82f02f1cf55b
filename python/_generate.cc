// attune._attune's Tokenizer and Generator: text to ids and back, and
// generation from text or ids. The GIL is released while the model runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attune/attune.h"

namespace py = pybind11;

namespace attune::python {

[[noreturn]] void Raise(const absl::Status& status);

namespace {

template <typename T>
T OrRaise(absl::StatusOr<T> value) {
  if (!value.ok()) Raise(value.status());
  return *std::move(value);
}

class PyTokenizer {
 public:
  explicit PyTokenizer(const std::string& path) : tokenizer_(OrRaise(Tokenizer::Load(path))) {}
  std::vector<int64_t> Encode(const std::string& text, bool add_special_tokens) const {
    return OrRaise(tokenizer_->Encode(text, add_special_tokens));
  }
  py::str Decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
    const std::string text = OrRaise(tokenizer_->Decode(ids, skip_special_tokens));
    return py::str(text);
  }
  int64_t vocab_size() const { return tokenizer_->vocab_size(); }
  std::vector<int64_t> eos_ids() const { return tokenizer_->eos_ids(); }
  const Tokenizer& get() const { return *tokenizer_; }

 private:
  std::unique_ptr<Tokenizer> tokenizer_;
};

class PyGenerator {
 public:
  PyGenerator(const std::string& model, std::optional<std::string> decode_model, std::optional<std::string> tokenizer,
              int threads) {
    SessionOptions options;
    options.threads = threads;
    first_ = OrRaise(Session::Create(model, options));
    if (decode_model) {
      decode_ = OrRaise(Session::Create(*decode_model, options));
      generator_ = OrRaise(Generator::Create(*first_, *decode_));
    } else {
      generator_ = OrRaise(Generator::Create(*first_));
    }
    if (tokenizer) tokenizer_ = std::make_unique<PyTokenizer>(*tokenizer);
    else if (auto beside = Tokenizer::FindBeside(model); beside.ok()) tokenizer_ = std::make_unique<PyTokenizer>(*beside);
  }

  // A str gives a str, a list of str a list of str, a list of ints the new ids.
  py::object Generate(const py::object& prompt, int64_t max_new_tokens, std::optional<int64_t> eos_id,
                      std::optional<float> temperature, int64_t top_k, float top_p, uint64_t seed,
                      const std::vector<std::string>& stop) const {
    GenerationOptions options;
    options.max_new_tokens = max_new_tokens;
    options.eos_id = eos_id.value_or(-1);
    options.greedy = !temperature && top_k == 0 && top_p >= 1.0f;
    options.temperature = temperature.value_or(1.0f);
    options.top_k = top_k;
    options.top_p = top_p;
    options.seed = seed;
    if (py::isinstance<py::str>(prompt) || (py::isinstance<py::list>(prompt) && py::len(prompt) > 0 &&
                                            py::isinstance<py::str>(prompt.cast<py::list>()[0]))) {
      if (!tokenizer_) Raise(absl::FailedPreconditionError("text prompts need a tokenizer (tokenizer=PATH)"));
      const bool single = py::isinstance<py::str>(prompt);
      const std::vector<std::string> prompts =
          single ? std::vector<std::string>{prompt.cast<std::string>()} : prompt.cast<std::vector<std::string>>();
      absl::StatusOr<TextGenerationResult> result;
      {
        py::gil_scoped_release release;
        result = generator_->GenerateText(tokenizer_->get(), prompts, options, stop);
      }
      const TextGenerationResult r = OrRaise(std::move(result));
      if (single) return py::str(r.text[0]);
      py::list texts;
      for (const std::string& t : r.text) texts.append(py::str(t));
      return texts;
    }
    const std::vector<int64_t> ids = prompt.cast<std::vector<int64_t>>();
    absl::StatusOr<GenerationResult> result;
    {
      py::gil_scoped_release release;
      result = generator_->Generate({ids}, options);
    }
    return py::cast(OrRaise(std::move(result)).generated_ids[0]);
  }

  py::object tokenizer() const { return tokenizer_ ? py::cast(tokenizer_.get(), py::return_value_policy::reference) : py::none(); }

 private:
  std::unique_ptr<Session> first_, decode_;
  std::unique_ptr<Generator> generator_;
  std::unique_ptr<PyTokenizer> tokenizer_;
};

}  // namespace

void BindGenerate(py::module_& m) {
  py::class_<PyTokenizer>(m, "Tokenizer")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("encode", &PyTokenizer::Encode, py::arg("text"), py::arg("add_special_tokens") = true)
      .def("decode", &PyTokenizer::Decode, py::arg("ids"), py::arg("skip_special_tokens") = false)
      .def_property_readonly("vocab_size", &PyTokenizer::vocab_size)
      .def_property_readonly("eos_ids", &PyTokenizer::eos_ids);
  py::class_<PyGenerator>(m, "Generator")
      .def(py::init<const std::string&, std::optional<std::string>, std::optional<std::string>, int>(),
           py::arg("model"), py::arg("decode_model") = py::none(), py::arg("tokenizer") = py::none(),
           py::arg("threads") = 0)
      .def("generate", &PyGenerator::Generate, py::arg("prompt"), py::arg("max_new_tokens") = 32,
           py::arg("eos_id") = py::none(), py::arg("temperature") = py::none(), py::arg("top_k") = 0,
           py::arg("top_p") = 1.0f, py::arg("seed") = 0, py::arg("stop") = std::vector<std::string>{})
      .def_property_readonly("tokenizer", &PyGenerator::tokenizer);
}

}  // namespace attune::python
