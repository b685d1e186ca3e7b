#pragma once
// The one serialiser of the worker messages (messages.hpp), used by both ends. A message
// travels as an Envelope: a JSON header ({"type": ..., "frames": N, fields...}) and N binary
// frames (cubins, never inside the JSON), written over cutune::process pipes as N + 1 frames.
// Everything else about a message is its typed struct; JSON exists only here.
#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cutune/process/subprocess.hpp"
#include "cutune/worker/messages.hpp"

namespace cutune::worker {

/// A message that cannot be read: a header that is not JSON, lacks a field or holds a value
/// of the wrong kind, names another message type than expected, or announces frames that do
/// not come. what() says which message and what is wrong with it.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Envelope {
  nlohmann::json header;              ///< {"type": ..., "frames": N, ...}
  std::vector<process::Frame> frames; ///< binary payloads, in the order the header names them
};

Envelope encode(const Compile& m);
Envelope encode(const Compiled& m);
Envelope encode(const Setup& m);
Envelope encode(const Identified& m);
Envelope encode(const Ready& m);
Envelope encode(const WorkerError& m);
Envelope encode(const Evaluate& m);
Envelope encode(const Evaluated& m);
Envelope encode(const Remeasure& m);
Envelope encode(const Remeasured& m);
Envelope encode(const BackToBack& m);
Envelope encode(const BackToBackTimed& m);
Envelope encode(const CopyBandwidth& m);
Envelope encode(const CopyBandwidthMeasured& m);
Envelope encode(const RunOnce& m);
Envelope encode(const RanOnce& m);
Envelope encode(const SetTimeout& m);
Envelope encode(const AdoptReference& m);
Envelope encode(const Shutdown& m);

/// The message of type M in `e`. Throws ProtocolError when `e` holds another type or is
/// malformed.
template <class M>
M decode(const Envelope& e);

template <> Compile decode<Compile>(const Envelope& e);
template <> Compiled decode<Compiled>(const Envelope& e);
template <> Setup decode<Setup>(const Envelope& e);
template <> Identified decode<Identified>(const Envelope& e);
template <> Ready decode<Ready>(const Envelope& e);
template <> WorkerError decode<WorkerError>(const Envelope& e);
template <> Evaluate decode<Evaluate>(const Envelope& e);
template <> Evaluated decode<Evaluated>(const Envelope& e);
template <> Remeasure decode<Remeasure>(const Envelope& e);
template <> Remeasured decode<Remeasured>(const Envelope& e);
template <> BackToBack decode<BackToBack>(const Envelope& e);
template <> BackToBackTimed decode<BackToBackTimed>(const Envelope& e);
template <> CopyBandwidth decode<CopyBandwidth>(const Envelope& e);
template <> CopyBandwidthMeasured decode<CopyBandwidthMeasured>(const Envelope& e);
template <> RunOnce decode<RunOnce>(const Envelope& e);
template <> RanOnce decode<RanOnce>(const Envelope& e);
template <> SetTimeout decode<SetTimeout>(const Envelope& e);
template <> AdoptReference decode<AdoptReference>(const Envelope& e);
template <> Shutdown decode<Shutdown>(const Envelope& e);

/// The header's "type". Throws ProtocolError when it has none.
std::string message_type(const Envelope& e);

/// Whichever of Ms `e` holds (told apart by its type). Throws ProtocolError for any other.
template <class... Ms>
std::variant<Ms...> decode_one_of(const Envelope& e) {
  const std::string type = message_type(e);
  std::optional<std::variant<Ms...>> out;
  ((type == Ms::kType ? (void)out.emplace(decode<Ms>(e)) : (void)0), ...);
  if (!out) {
    std::string expected;
    ((expected += (expected.empty() ? "" : ", ") + std::string(Ms::kType)), ...);
    throw ProtocolError("worker protocol: a '" + type + "' message where one of " + expected + " was expected");
  }
  return std::move(*out);
}

/// The requests a GPU worker reads after its Setup.
using GpuRequest = std::variant<Evaluate, Remeasure, BackToBack, CopyBandwidth, RunOnce, Shutdown>;

/// A whole message as one buffer (header length, header, then each frame with its length),
/// for a transport of whole buffers (MPI); from_bytes throws ProtocolError for a buffer
/// that is not one.
std::vector<char> to_bytes(const Envelope& e);
Envelope from_bytes(const char* data, std::size_t size);

/// The header as text (one frame). Throws ProtocolError when it is not a JSON object.
nlohmann::json parse_header(const process::Frame& text);

/// Writes the header frame, then the binary frames. False when the other end is gone.
bool write_message(int fd, const Envelope& e);
/// Reads one message. nullopt at end of file or on a read error, or when `timeout` passed
/// first (sets *timed_out). Throws ProtocolError for a malformed header.
std::optional<Envelope> read_message(int fd, std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                                     bool* timed_out = nullptr);

/// The same through a child process's pipes. receive: nullopt when the child closed its
/// end (died) or `timeout` passed for the whole message (then child.timed_out()).
bool send(process::Subprocess& child, const Envelope& e);
std::optional<Envelope> receive(process::Subprocess& child,
                                std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace cutune::worker
