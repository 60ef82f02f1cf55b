// attune._attune: the Session of the public C++ API for Python. Inputs are borrowed from
// numpy arrays, outputs are numpy arrays over the result tensors' memory; attune/__init__.py
// gives it the shape of ONNX Runtime's InferenceSession.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attune/attune.h"

namespace py = pybind11;

namespace attune::python {

void BindGenerate(py::module_& m);  // _generate.cc: Tokenizer and Generator

// Attune's status codes as the Python exceptions ONNX Runtime users expect. Needs the GIL.
[[noreturn]] void Raise(const absl::Status& status) {
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      type = PyExc_ValueError;
      break;
    case absl::StatusCode::kUnimplemented:
      type = PyExc_NotImplementedError;
      break;
    case absl::StatusCode::kResourceExhausted:
      type = PyExc_MemoryError;
      break;
    case absl::StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    default:
      break;
  }
  PyErr_SetString(type, std::string(status.message()).c_str());
  throw py::error_already_set();
}

namespace {

template <typename T>
T ValueOrRaise(absl::StatusOr<T> value) {
  if (!value.ok()) Raise(value.status());
  return *std::move(value);
}

// numpy's name for each element type; bfloat16 has none.
const char* NumpyName(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "float32";
    case ElementType::kFloat64: return "float64";
    case ElementType::kFloat16: return "float16";
    case ElementType::kInt8: return "int8";
    case ElementType::kUint8: return "uint8";
    case ElementType::kInt16: return "int16";
    case ElementType::kUint16: return "uint16";
    case ElementType::kInt32: return "int32";
    case ElementType::kUint32: return "uint32";
    case ElementType::kInt64: return "int64";
    case ElementType::kUint64: return "uint64";
    case ElementType::kBool: return "bool";
    default: return nullptr;
  }
}

// The element type of a numpy dtype, or kUndefined when Attune has none for it.
ElementType FromNumpy(const py::dtype& dtype) {
  static constexpr ElementType kTypes[] = {
      ElementType::kFloat32, ElementType::kFloat64, ElementType::kFloat16, ElementType::kInt8,
      ElementType::kUint8,   ElementType::kInt16,   ElementType::kUint16,  ElementType::kInt32,
      ElementType::kUint32,  ElementType::kInt64,   ElementType::kUint64,  ElementType::kBool};
  for (ElementType type : kTypes)
    if (dtype.is(py::dtype(NumpyName(type))) || dtype.equal(py::dtype(NumpyName(type)))) return type;
  return ElementType::kUndefined;
}

// ONNX Runtime's spelling of a tensor type: "tensor(float)", "tensor(int64)", ...
std::string OrtTypeName(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "tensor(float)";
    case ElementType::kFloat64: return "tensor(double)";
    case ElementType::kFloat16: return "tensor(float16)";
    case ElementType::kBFloat16: return "tensor(bfloat16)";
    case ElementType::kBool: return "tensor(bool)";
    case ElementType::kString: return "tensor(string)";
    case ElementType::kUndefined: return "tensor(undefined)";
    default: return std::string("tensor(") + ElementTypeName(type) + ")";
  }
}

// (name, type, shape) with shape a list of ints, symbol strings and None, or None for an unknown rank.
py::tuple InfoToTuple(const TensorInfo& info) {
  py::object shape = py::none();
  if (info.has_shape) {
    py::list dims;
    for (size_t i = 0; i < info.shape.size(); ++i) {
      if (info.shape[i] >= 0) dims.append(info.shape[i]);
      else if (i < info.shape_symbols.size() && !info.shape_symbols[i].empty()) dims.append(info.shape_symbols[i]);
      else dims.append(py::none());
    }
    shape = dims;
  }
  return py::make_tuple(info.name, OrtTypeName(info.type), shape);
}

py::dict FusionToDict(const FusionRecord& f) {
  py::dict d;
  d["op"] = f.op;
  d["node"] = f.node;
  d["pattern"] = f.pattern;
  d["replaced"] = f.replaced;
  d["num_heads"] = f.num_heads;
  d["kv_num_heads"] = f.kv_num_heads;
  d["head_dim"] = f.head_dim;
  d["scale"] = f.scale;
  d["causal"] = f.causal;
  d["window"] = f.window > 0 ? py::object(py::int_(f.window)) : py::object(py::none());
  d["mask"] = f.mask;
  d["masked_rows"] = f.masked_rows.empty() ? py::object(py::none()) : py::object(py::str(f.masked_rows));
  d["key_padding"] = f.key_padding.empty() ? py::object(py::none()) : py::object(py::str(f.key_padding));
  d["bias"] = f.bias.empty() ? py::object(py::none()) : py::object(py::str(f.bias));
  d["sinks"] = f.sinks.empty() ? py::object(py::none()) : py::object(py::str(f.sinks));
  d["weights"] = f.weights.empty() ? py::object(py::none()) : py::object(py::str(f.weights));
  d["max_kv_len"] = f.max_kv_len > 0 ? py::object(py::int_(f.max_kv_len)) : py::object(py::none());
  d["q_layout"] = f.q_layout;
  d["has_past"] = f.has_past;
  d["undone"] = f.undone;
  if (f.verify_max_abs_error) d["verify_max_abs_error"] = *f.verify_max_abs_error;
  if (f.verify_max_rel_error) d["verify_max_rel_error"] = *f.verify_max_rel_error;
  return d;
}

py::dict OpFusionToDict(const OpFusionRecord& f) {
  py::dict d;
  d["op"] = f.op;
  d["node"] = f.node;
  d["pattern"] = f.pattern;
  d["attributes"] = f.attributes;
  d["replaced"] = f.replaced;
  d["undone"] = f.undone;
  if (f.verify_max_abs_error) d["verify_max_abs_error"] = *f.verify_max_abs_error;
  if (f.verify_max_rel_error) d["verify_max_rel_error"] = *f.verify_max_rel_error;
  return d;
}

// An input handed to Run: the array whose memory Attune reads in place.
struct BorrowedInput {
  std::string name;
  py::array array;  // C-contiguous, keeps the memory alive during the run
  Tensor tensor;
};

// An output tensor as an ndarray over its memory. When the output is (a view of) an input's
// memory, the array's base is that input array; otherwise a capsule holding the tensor handle.
py::array OutputToArray(const Tensor& tensor, const std::vector<BorrowedInput>& inputs) {
  const char* name = NumpyName(tensor.type());
  if (name == nullptr)
    Raise(absl::UnimplementedError(std::string("output type ") + ElementTypeName(tensor.type()) +
                                   " has no numpy dtype"));
  py::dtype dtype(name);
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.num_elements() == 0) return py::array(dtype, shape);
  const char* data = static_cast<const char*>(tensor.raw_data());
  for (const BorrowedInput& in : inputs) {
    const char* begin = static_cast<const char*>(in.tensor.raw_data());
    if (begin != nullptr && data >= begin && data + tensor.byte_size() <= begin + in.tensor.byte_size())
      return py::array(dtype, shape, {}, data, in.array);
  }
  auto* handle = new Tensor(tensor);
  py::capsule owner(handle, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype, shape, {}, data, owner);
}

// SessionOptions::weights from the keyword arguments (docs/quantization.md).
WeightCompressionOptions WeightOptions(const std::string& format, int block, bool symmetric, int accuracy_level,
                                       bool keep_lm_head) {
  WeightCompressionOptions w;
  if (format == "int4") w.format = WeightFormat::kInt4;
  else if (format == "int8") w.format = WeightFormat::kInt8;
  else if (format == "bf16") w.format = WeightFormat::kBf16;
  else if (!format.empty())
    Raise(absl::InvalidArgumentError("weights must be None, \"bf16\", \"int8\" or \"int4\", got \"" + format + "\""));
  if (block < 16 || block > 256 || (block & (block - 1)) != 0)
    Raise(absl::InvalidArgumentError("weight_block must be 16, 32, 64, 128 or 256, got " + std::to_string(block)));
  if (accuracy_level < 0 || accuracy_level > 4)
    Raise(absl::InvalidArgumentError("weight_accuracy_level must be 0 to 4, got " + std::to_string(accuracy_level)));
  w.block_size = block;
  w.symmetric = symmetric;
  w.accuracy_level = accuracy_level;
  w.keep_output_products = keep_lm_head;
  return w;
}

class PySession {
 public:
  PySession(py::object model, int threads, bool fuse, bool verify_fusion, const std::string& attention_backend,
            std::vector<std::string> disabled_passes, std::optional<int64_t> max_tensor_mb, const std::string& weights,
            int weight_block, bool weight_symmetric, int weight_accuracy_level, bool keep_lm_head) {
    SessionOptions options;
    options.weights = WeightOptions(weights, weight_block, weight_symmetric, weight_accuracy_level, keep_lm_head);
    if (threads < 0) Raise(absl::InvalidArgumentError("threads must be 0 (all cores) or more"));
    options.threads = threads;
    options.fuse = fuse;
    options.verify_fusion = verify_fusion;
    options.disabled_passes = std::move(disabled_passes);
    if (max_tensor_mb) {
      if (*max_tensor_mb <= 0 || *max_tensor_mb > (int64_t{1} << 40))
        Raise(absl::InvalidArgumentError("max_tensor_mb out of range"));
      options.max_tensor_bytes = *max_tensor_mb << 20;
    }
    if (attention_backend == "auto") options.attention_backend = AttentionBackendOption::kAuto;
    else if (attention_backend == "simd") options.attention_backend = AttentionBackendOption::kSimd;
    else if (attention_backend == "onednn") options.attention_backend = AttentionBackendOption::kOneDnn;
    else if (attention_backend == "reference") options.attention_backend = AttentionBackendOption::kReference;
    else
      Raise(absl::InvalidArgumentError("attention_backend must be auto, simd, onednn or reference, got \"" +
                                       attention_backend + "\""));
    fuse_ = fuse;
    if (py::isinstance<py::bytes>(model)) {
      char* data = nullptr;
      Py_ssize_t size = 0;
      if (PyBytes_AsStringAndSize(model.ptr(), &data, &size) != 0) throw py::error_already_set();
      const std::string_view bytes(data, static_cast<size_t>(size));  // `model` keeps it alive
      absl::StatusOr<std::unique_ptr<Session>> session;
      {
        py::gil_scoped_release release;
        session = Session::CreateFromBytes(bytes, options);
      }
      session_ = ValueOrRaise(std::move(session));
    } else {
      path_ = py::str(py::module_::import("os").attr("fspath")(model));
      absl::StatusOr<std::unique_ptr<Session>> session;
      {
        py::gil_scoped_release release;
        session = Session::Create(path_, options);
      }
      session_ = ValueOrRaise(std::move(session));
    }
  }

  py::list Inputs() const { return InfoList(session_->inputs()); }
  py::list Outputs() const { return InfoList(session_->outputs()); }
  py::object Path() const { return path_.empty() ? py::object(py::none()) : py::object(py::str(path_)); }
  bool fuse() const { return fuse_; }

  // Runs with the GIL released; returns the requested outputs (all when names is None) in order.
  py::list Run(std::optional<std::vector<std::string>> names, const py::dict& feeds) const {
    std::vector<BorrowedInput> borrowed;
    borrowed.reserve(feeds.size());
    for (const auto& [key, value] : feeds) {
      BorrowedInput in;
      in.name = py::cast<std::string>(key);
      if (!py::isinstance<py::array>(value))
        Raise(absl::InvalidArgumentError("input \"" + in.name + "\" must be a numpy array, got " +
                                         std::string(py::str(py::type::of(value).attr("__name__")))));
      py::array array = py::reinterpret_borrow<py::array>(value);
      const ElementType type = FromNumpy(array.dtype());
      if (type == ElementType::kUndefined)
        Raise(absl::InvalidArgumentError("input \"" + in.name + "\" has numpy dtype " +
                                         std::string(py::str(array.dtype())) + ", which Attune cannot hold"));
      // One copy for a strided array: Attune reads row-major memory in place.
      if (!(array.flags() & py::array::c_style))
        array = py::array::ensure(array, py::array::c_style);
      TensorView view;
      view.type = type;
      view.shape.assign(array.shape(), array.shape() + array.ndim());
      view.data = const_cast<void*>(array.data());
      in.tensor = ValueOrRaise(Tensor::Borrow(view));
      in.array = std::move(array);
      borrowed.push_back(std::move(in));
    }
    NamedTensors inputs;
    inputs.reserve(borrowed.size());
    for (const BorrowedInput& in : borrowed) inputs.emplace_back(in.name, in.tensor);

    absl::StatusOr<NamedTensors> result;
    {
      py::gil_scoped_release release;
      result = session_->Run(inputs);
    }
    NamedTensors outputs = ValueOrRaise(std::move(result));
    py::list arrays;
    if (!names) {
      for (const auto& [name, tensor] : outputs) arrays.append(OutputToArray(tensor, borrowed));
      return arrays;
    }
    for (const std::string& want : *names) {
      const Tensor* found = nullptr;
      for (const auto& [name, tensor] : outputs)
        if (name == want) found = &tensor;
      if (found == nullptr) Raise(absl::InvalidArgumentError("unknown output \"" + want + "\""));
      arrays.append(OutputToArray(*found, borrowed));
    }
    return arrays;
  }

  // The FusionReport's fields; __init__.py adds model, inputs and outputs.
  py::dict Report() const {
    const FusionReport& r = session_->fusion_report();
    py::list fusions, op_fusions, rejected;
    for (const FusionRecord& f : r.fusions) fusions.append(FusionToDict(f));
    for (const OpFusionRecord& f : r.op_fusions) op_fusions.append(OpFusionToDict(f));
    for (const RejectedCandidate& c : r.rejected) {
      py::dict d;
      d["at"] = c.at;
      d["pattern"] = c.pattern;
      d["reason"] = c.reason;
      rejected.append(d);
    }
    py::dict d;
    d["ops_before"] = r.ops_before;
    d["ops_after"] = r.ops_after;
    d["fusions"] = fusions;
    d["op_fusions"] = op_fusions;
    d["rejected"] = rejected;
    d["passes_run"] = r.passes_run;
    py::list caps;
    for (const IterationCapHit& cap : r.iteration_cap_hit) {
      py::dict c;
      c["stage"] = cap.stage;
      c["rounds"] = cap.rounds;
      caps.append(c);
    }
    d["iteration_cap_hit"] = caps;
    d["assumptions"] = r.assumptions;
    d["stopped_after"] = r.stopped_after.empty() ? py::object(py::none()) : py::object(py::str(r.stopped_after));
    return d;
  }

  void SaveOptimizedModel(const std::string& path) const {
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = session_->SaveOptimizedModel(path);
    }
    if (!status.ok()) Raise(status);
  }

 private:
  static py::list InfoList(const std::vector<TensorInfo>& infos) {
    py::list list;
    for (const TensorInfo& info : infos) list.append(InfoToTuple(info));
    return list;
  }

  std::unique_ptr<Session> session_;
  std::string path_;
  bool fuse_ = true;
};

}  // namespace
}  // namespace attune::python

PYBIND11_MODULE(_attune, m) {
  using attune::python::PySession;
  m.doc() = "Attune's Session (use attune.InferenceSession)";
  m.attr("__version__") = ATTUNE_VERSION;
  py::class_<PySession>(m, "Session")
      .def(py::init<py::object, int, bool, bool, const std::string&, std::vector<std::string>,
                    std::optional<int64_t>, const std::string&, int, bool, int, bool>(),
           py::arg("model"), py::arg("threads"), py::arg("fuse"), py::arg("verify_fusion"),
           py::arg("attention_backend"), py::arg("disabled_passes"), py::arg("max_tensor_mb"),
           py::arg("weights"), py::arg("weight_block"), py::arg("weight_symmetric"),
           py::arg("weight_accuracy_level"), py::arg("keep_lm_head"))
      .def("inputs", &PySession::Inputs)
      .def("outputs", &PySession::Outputs)
      .def("path", &PySession::Path)
      .def("fuse", &PySession::fuse)
      .def("run", &PySession::Run, py::arg("output_names"), py::arg("feeds"))
      .def("report", &PySession::Report)
      .def("save_optimized_model", &PySession::SaveOptimizedModel, py::arg("path"));
  m.def("list_passes", &attune::ListPasses);
  attune::python::BindGenerate(m);
}
