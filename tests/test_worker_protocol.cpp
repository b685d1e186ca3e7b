// The worker messages (tuner/worker/messages.hpp) through their one serialiser: every
// message encoded and decoded again, in memory and as the frames a pipe carries, equals
// what was sent; a malformed message is refused with an error that names the message and
// the field. No GPU, no worker process.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <thread>

#include "cutune/worker/external_verifier.hpp"
#include "cutune/worker/protocol.hpp"

using namespace cutune;
using namespace cutune::worker;
using Catch::Matchers::Contains;

namespace {

std::vector<char> bytes(std::size_t n, char seed) {
  std::vector<char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<char>(seed + static_cast<char>(i * 7));
  return v;
}

Candidate candidate(std::uint32_t k, std::size_t cubin_bytes) {
  return {Config{{k, k + 1, 0}}, bytes(cubin_bytes, static_cast<char>(k)), {"_Z1kPf", "kernel_" + std::to_string(k)}};
}

MeasureOptions options() {
  MeasureOptions o;
  o.cold_l2 = false;
  o.rotate_when_fits = false;
  o.sampler.flush_l2 = false;
  o.sampler.flush_l2_multiple = 2.25;
  o.sampler.warmup_launches = 3;
  o.sampler.probe_clock = false;
  o.sampler.timer = SampleTimer::Activity;
  o.sampler.throttle = {0.5, 1980.0, 4, 0.125};
  o.screening = {3, 7, 1.25, 0.02, 0.5, 0.9};
  o.thorough = {11, 222, 0.0025, 2.5, 33, 0.0625, 0.99};
  o.finalists = 5;
  o.verifier = "/tmp/cutune-v-x/verify.sock";
  o.energy_every_config = true;
  o.energy_window_s = 0.375;
  o.verify = {"out=none", "default"};
  return o;
}

GpuEvaluation evaluation(bool with_stats) {
  GpuEvaluation e;
  e.status = with_stats ? Status::Ok : Status::Correctness;
  e.error = with_stats ? "" : "out[3] = 1, expected 2 (1 of 1000 elements differ)";
  e.verify_ms = 0.5;
  e.load_ms = 1.25;
  e.stage_ms = 7.75;
  e.idle_before_ms = 0.0625;
  e.context_lost = !with_stats;
  e.defined_expected = with_stats;
  if (with_stats) {
    MeasuredStats s;
    s.level = MeasurementLevel::Thorough;
    s.set = {{1.0, 1.5, 1.25}, {1980, 1965, 1980}, {9.5}, 2, 1, StopReason::noise_stabilised, 12.5,
             SampleTimer::Activity, 3};
    s.summary = {3, 1.25, 1.25, 1.0, 1.5, 0.25, 0.2, 1.0, 1.5, 0.75, 0.2};
    s.l2 = {L2Method::Kind::Rotate, 17};
    s.temperature_c = 61.0;
    s.energy_mj_per_launch = 0.03125;
    s.nvml_sm_clock_mhz = 1980.0;  // power_w left empty: an optional that travels as none
    e.stats = s;
  }
  // A failure after loading keeps its resources too; its occupancy was not asked (none travels).
  KernelResources r;
  r.registers = 72;
  r.local_bytes = 24;
  r.static_shared_bytes = 4096;
  r.dynamic_shared_bytes = 49152;
  r.const_bytes = 16;
  r.max_threads_per_block = 768;
  r.block_threads = 256;
  if (with_stats) {
    r.active_blocks_per_sm = 3;
    r.occupancy = 0.375;
  }
  e.resources = r;
  // What the package's observers gave, in their order (not sorted by name).
  if (with_stats) e.observed = {{"error_rmse", 0.015625}, {"num_regs", 72.0}, {"accuracy", -3.5}};
  return e;
}

/// Writes `e` into a pipe on a thread (a cubin may be larger than the pipe holds) and reads
/// it back as the other end of a worker pipe does.
Envelope through_pipe(const Envelope& e) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  bool written = false;
  std::thread writer([&] {
    written = write_message(fds[1], e);
    ::close(fds[1]);
  });
  std::optional<Envelope> back = read_message(fds[0]);
  writer.join();
  ::close(fds[0]);
  REQUIRE(written);
  REQUIRE(back);
  return *back;
}

template <class M>
void round_trip(const M& m) {
  INFO("message " << M::kType);
  const Envelope e = encode(m);
  CHECK(message_type(e) == M::kType);
  CHECK(decode<M>(e) == m);
  CHECK(decode<M>(through_pipe(e)) == m);
  const std::vector<char> bytes = to_bytes(e);  // as one MPI message carries it
  CHECK(decode<M>(from_bytes(bytes.data(), bytes.size())) == m);
}

template <class M>
std::string error_of(const Envelope& e) {
  try {
    (void)decode<M>(e);
  } catch (const ProtocolError& x) {
    return x.what();
  }
  FAIL("decoding a malformed '" << M::kType << "' message did not throw");
  return {};
}

}  // namespace

TEST_CASE("worker protocol: every message round-trips, in memory and through a pipe", "[worker][protocol]") {
  jit::CompileRequest request{"extern \"C\" __global__ void k() {}", "k.cu", {"k", "ns::k<4>"},
                              {"-DN=4", "-std=c++17"}, "sm_90", {{"a.h", "#define A 1\n"}, {"b.h", ""}},
                              Compiler::Nvcc, "/src/kernels"};
  round_trip(Compile{request});
  jit::CompileResult result{true, bytes(100000, 'c'), {"k", "_ZN2ns1kILi4EEEvv"}, "warning: x", "", 12.5,
                            {"--gpu-architecture=sm_90"}, false};
  round_trip(Compiled{result});
  round_trip(Compiled{jit::CompileResult{}});  // a failed compile: no cubin, an empty frame

  round_trip(Setup{"/data/kernels/vector_add.json", "n=2**20", 3, 0xfedcba9876543210ULL, options()});
  round_trip(Setup{});
  round_trip(Ready{VerificationPlan{{VerifyMode::None, VerifyMode::Reference, VerifyMode::Default}},
                   L2Method{L2Method::Kind::Warm, 1},
                   std::size_t{3} << 33,
                   {{"load_and_cuinit", 12.5}, {"context", 301.0}, {"nvml_overlapped", 4.25}}});
  round_trip(WorkerError{true, false, "vector_add.json: cutune.Reference: no CPU reference named 'x'"});
  round_trip(WorkerError{false, false, "CUDA_ERROR_ILLEGAL_ADDRESS"});
  round_trip(WorkerError{false, true, "libcuda.so.1: cannot open shared object file"});
  DeviceIdentity gpu;
  gpu.name = "NVIDIA H200";
  gpu.cc_major = 9;
  gpu.sm_count = 132;
  gpu.memory_bytes = std::uint64_t{150} << 30;
  gpu.driver_release = "580.159";
  gpu.uuid = "GPU-0a1b";
  round_trip(Identified{gpu});
  round_trip(SetTimeout{125000});
  round_trip(AdoptReference{candidate(4, 70000)});

  round_trip(Evaluate{candidate(4, 70000), 0.125, false});
  round_trip(Evaluate{candidate(0, 0), std::nullopt, true});
  round_trip(Evaluated{evaluation(true)});
  round_trip(Evaluated{evaluation(false)});
  round_trip(Remeasure{{candidate(1, 10), candidate(2, 70000), candidate(3, 0)}});
  round_trip(Remeasure{});
  round_trip(Remeasured{{evaluation(true), evaluation(false)}});
  round_trip(BackToBack{candidate(7, 33), 1000});
  round_trip(BackToBackTimed{0.015625});
  round_trip(CopyBandwidth{std::size_t{256} << 20});
  round_trip(CopyBandwidthMeasured{3012.5});
  round_trip(RunOnce{candidate(5, 4000)});
  RanOnce ran;
  ran.arguments = {bytes(4000, 'a'), bytes(0, 'b'), bytes(4, 'c')};  // a vector, an empty one, a scalar
  round_trip(ran);
  ran = RanOnce{};
  ran.status = Status::Runtime;
  ran.error = "an illegal memory access was encountered";
  ran.context_lost = true;
  round_trip(ran);
  round_trip(Shutdown{});
}

TEST_CASE("worker protocol: run_once's arguments travel as frames of the announced sizes", "[worker][protocol]") {
  RanOnce ran;
  ran.arguments = {bytes(300, 'x'), bytes(8, 'y')};
  Envelope e = encode(ran);
  REQUIRE(e.frames.size() == 2);
  CHECK(e.frames[0].size() == 300);
  CHECK(e.header.dump().size() < 300);
  e.frames[1].pop_back();  // a frame shorter than its header says
  try {
    (void)decode<RanOnce>(e);
    FAIL("a short argument read as a whole one");
  } catch (const ProtocolError& x) {
    CHECK_THAT(std::string(x.what()), Contains("arguments[1]") && Contains("7 bytes where 8 were announced"));
  }
}

TEST_CASE("worker protocol: cubins travel as frames, not inside the JSON header", "[worker][protocol]") {
  const Envelope e = encode(Remeasure{{candidate(1, 5), candidate(2, 9)}});
  REQUIRE(e.frames.size() == 2);
  CHECK(e.frames[0].size() == 5);
  CHECK(e.frames[1].size() == 9);
  CHECK(e.header.at("frames") == 2);
  CHECK(e.header.dump().size() < 400);
}

TEST_CASE("worker protocol: infinities and NaN survive the JSON text", "[worker][protocol]") {
  // JSON has no NaN or infinity (nlohmann writes null): a metric's cost summary is infinite
  // where the metric has no value, and a reading may be NaN.
  GpuEvaluation e = evaluation(true);
  e.stats->summary.ci_high = std::numeric_limits<double>::infinity();
  e.stats->summary.ci_low = -std::numeric_limits<double>::infinity();
  e.stats->power_w = std::numeric_limits<double>::quiet_NaN();
  const GpuEvaluation back = decode<Evaluated>(through_pipe(encode(Evaluated{e}))).evaluation;
  REQUIRE(back.stats);
  CHECK(back.stats->summary.ci_high == std::numeric_limits<double>::infinity());
  CHECK(back.stats->summary.ci_low == -std::numeric_limits<double>::infinity());
  REQUIRE(back.stats->power_w);
  CHECK(std::isnan(*back.stats->power_w));
  e.observed = {{"error", std::numeric_limits<double>::quiet_NaN()}, {"peak", std::numeric_limits<double>::infinity()}};
  const GpuEvaluation observed = decode<Evaluated>(through_pipe(encode(Evaluated{e}))).evaluation;
  REQUIRE(observed.observed.size() == 2);
  CHECK(observed.observed[0].first == "error");
  CHECK(std::isnan(observed.observed[0].second));
  CHECK(observed.observed[1].second == std::numeric_limits<double>::infinity());
}

TEST_CASE("worker protocol: one of several replies is told apart by its type", "[worker][protocol]") {
  const auto ready = decode_one_of<Ready, WorkerError>(encode(Ready{}));
  CHECK(std::holds_alternative<Ready>(ready));
  const auto error = decode_one_of<Ready, WorkerError>(encode(WorkerError{true, false, "bad"}));
  REQUIRE(std::holds_alternative<WorkerError>(error));
  CHECK(std::get<WorkerError>(error).input_error);
  const GpuRequest request = decode_one_of<Evaluate, Remeasure, BackToBack, CopyBandwidth, RunOnce, Shutdown>(
      encode(CopyBandwidth{1024}));
  REQUIRE(std::holds_alternative<CopyBandwidth>(request));
  CHECK(std::get<CopyBandwidth>(request).bytes == 1024);
  try {
    (void)decode_one_of<Evaluate, Shutdown>(encode(Ready{}));
    FAIL("a reply decoded as a request");
  } catch (const ProtocolError& x) {
    CHECK_THAT(std::string(x.what()), Contains("'ready'") && Contains("evaluate, shutdown"));
  }
}

TEST_CASE("worker protocol: a malformed message is refused, naming the message and the field", "[worker][protocol]") {
  SECTION("another message type") {
    CHECK_THAT(error_of<Evaluate>(encode(Evaluated{})), Contains("'evaluated'") && Contains("'evaluate' was expected"));
  }
  SECTION("a missing field") {
    Envelope e = encode(Evaluate{candidate(1, 4), 0.5, true});
    e.header.erase("thorough");
    CHECK_THAT(error_of<Evaluate>(e), Contains("malformed 'evaluate' message") && Contains("field 'thorough'") &&
                                          Contains("missing"));
  }
  SECTION("a nested field of the wrong kind") {
    Envelope e = encode(Setup{"p.json", "", 0, 1, options()});
    e.header["measure"]["sampler"]["warmup_launches"] = "three";
    CHECK_THAT(error_of<Setup>(e), Contains("'setup'") && Contains("field 'measure.sampler.warmup_launches'") &&
                                       Contains("not an integer"));
  }
  SECTION("an unknown name of an enum") {
    Envelope e = encode(Evaluated{evaluation(true)});
    e.header["evaluation"]["status"] = "splendid";
    CHECK_THAT(error_of<Evaluated>(e), Contains("field 'evaluation.status'") && Contains("unknown status \"splendid\""));
    e = encode(Evaluated{evaluation(true)});
    e.header["evaluation"]["stats"]["set"]["timer"] = "sundial";
    CHECK_THAT(error_of<Evaluated>(e), Contains("field 'evaluation.stats.set.timer'") && Contains("unknown timer"));
  }
  SECTION("an element of a list") {
    Envelope e = encode(Remeasured{{evaluation(true), evaluation(false)}});
    e.header["evaluations"][1]["verify_ms"] = nullptr;
    CHECK_THAT(error_of<Remeasured>(e), Contains("field 'evaluations[1].verify_ms'") && Contains("not a number"));
  }
  SECTION("a negative count") {
    Envelope e = encode(CopyBandwidth{64});
    e.header["bytes"] = -64;
    CHECK_THAT(error_of<CopyBandwidth>(e), Contains("field 'bytes'"));
  }
  SECTION("frames that do not match the header") {
    Envelope e = encode(Evaluate{candidate(1, 4), std::nullopt, false});
    e.frames.clear();
    CHECK_THAT(error_of<Evaluate>(e), Contains("announces 1 frames, 0 came"));
    e = encode(Remeasure{{candidate(1, 4)}});
    e.header["candidates"][0]["cubin"] = 5;
    CHECK_THAT(error_of<Remeasure>(e), Contains("field 'candidates[0].cubin'") && Contains("frame 5 of 1"));
  }
  SECTION("a configuration that is not a list of indices") {
    Envelope e = encode(BackToBack{candidate(1, 4), 10});
    e.header["candidate"]["config"] = "128,4,1";
    CHECK_THAT(error_of<BackToBack>(e), Contains("field 'candidate.config'") && Contains("not an array"));
  }
  SECTION("a header that is not JSON, or has no type") {
    CHECK_THROWS_WITH(parse_header("{\"type\": \"evaluate\", "), Contains("not JSON"));
    CHECK_THROWS_WITH(parse_header("[1, 2]"), Contains("not an object"));
    CHECK_THROWS_WITH(message_type(Envelope{nlohmann::json{{"frames", 0}}, {}}), Contains("without a message type"));
  }
  SECTION("a header that announces an absurd number of frames") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(process::write_frame(fds[1], R"({"type": "shutdown", "frames": -1})"));
    ::close(fds[1]);
    CHECK_THROWS_WITH(read_message(fds[0]), Contains("without a valid frame count"));
    ::close(fds[0]);
  }
}

TEST_CASE("worker protocol: a buffer that is not one whole message is refused", "[worker][protocol]") {
  const std::vector<char> bytes = to_bytes(encode(Evaluate{candidate(4, 70000), 0.125, false}));
  CHECK_THROWS_AS(from_bytes(bytes.data(), bytes.size() - 1), ProtocolError);
  CHECK_THROWS_AS(from_bytes(bytes.data(), 3), ProtocolError);
  std::vector<char> longer = bytes;
  longer.push_back('x');
  CHECK_THROWS_AS(from_bytes(longer.data(), longer.size()), ProtocolError);
}

TEST_CASE("worker protocol: a message cut short reads as the end of the conversation", "[worker][protocol]") {
  // A worker that dies between a header and its cubin: no message, never half of one.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const Envelope e = encode(Evaluate{candidate(1, 16), std::nullopt, false});
  REQUIRE(process::write_frame(fds[1], e.header.dump()));
  ::close(fds[1]);
  CHECK_FALSE(read_message(fds[0]));
  ::close(fds[0]);
}

namespace {

/// The package's end of an external verifier, played by the test: a listening Unix socket in a
/// fresh folder, one connection served on a thread by `serve` (given the connected fd).
class FakeVerifierServer {
 public:
  explicit FakeVerifierServer(std::function<void(int)> serve) {
    char dir[] = "/tmp/cutune-vt-XXXXXX";
    REQUIRE(::mkdtemp(dir) != nullptr);
    dir_ = dir;
    path_ = dir_ + "/v.sock";
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path_.data(), path_.size());
    REQUIRE(::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listen_fd_, 1) == 0);
    thread_ = std::thread([this, serve = std::move(serve)] {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      serve(fd);
      ::close(fd);
    });
  }
  ~FakeVerifierServer() {
    thread_.join();
    ::close(listen_fd_);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  FakeVerifierServer(const FakeVerifierServer&) = delete;  // owns a thread and a socket
  FakeVerifierServer& operator=(const FakeVerifierServer&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
  int listen_fd_ = -1;
  std::thread thread_;
};

nlohmann::json read_json_frame(int fd) {
  const auto frame = process::read_frame(fd);
  return frame ? nlohmann::json::parse(*frame) : nlohmann::json();
}

}  // namespace

TEST_CASE("external verifier: the configuration goes out with its value indices and resources, observed values come back",
          "[worker][protocol]") {
  nlohmann::json hello, head;
  std::string output;
  FakeVerifierServer server([&](int fd) {
    hello = read_json_frame(fd);
    process::write_frame(fd, R"({"arguments": [0]})");
    head = read_json_frame(fd);
    output = process::read_frame(fd).value_or("");
    process::write_frame(fd, R"({"seq": 1, "ok": true, "error": "",
                                 "observed": {"error_rmse": 0.25, "num_regs": 40, "bad": "NaN"}})");
  });
  ExternalVerifier v(server.path(), {"out", "n"});
  CHECK(v.arguments() == std::vector<std::size_t>{0});
  KernelResources r;
  r.registers = 40;
  const auto verdict = v.check({"128,2", {3, 1}, r}, {process::Frame("abcd")});
  CHECK(hello.at("arguments") == nlohmann::json({"out", "n"}));
  CHECK(head.at("config") == "128,2");
  CHECK(head.at("indices") == nlohmann::json({3, 1}));
  CHECK(head.at("resources").at("registers") == 40);
  CHECK(head.at("arguments") == nlohmann::json({0}));
  CHECK(output == "abcd");
  CHECK(verdict.ok);
  REQUIRE(verdict.observed.size() == 3);
  CHECK(verdict.observed[0] == std::pair<std::string, double>{"error_rmse", 0.25});
  CHECK(verdict.observed[1] == std::pair<std::string, double>{"num_regs", 40.0});
  CHECK(std::isnan(verdict.observed[2].second));
}

TEST_CASE("external verifier: no resources known, none sent, and an observed value that is no number refused",
          "[worker][protocol]") {
  nlohmann::json head;
  FakeVerifierServer server([&](int fd) {
    (void)read_json_frame(fd);
    process::write_frame(fd, R"({"arguments": []})");
    head = read_json_frame(fd);
    process::write_frame(fd, R"({"seq": 1, "ok": true, "observed": {"label": "fast"}})");
  });
  ExternalVerifier v(server.path(), {"out"});
  CHECK_THROWS_WITH(v.check({"64", {0}, std::nullopt}, {}), Contains("observed label of 64 is not a number"));
  CHECK_FALSE(head.contains("resources"));
}
