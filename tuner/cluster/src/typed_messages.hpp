#pragma once
// The worker messages (worker/messages.hpp) over the MPI world: each one whole buffer,
// encoded by the worker protocol's one serialiser.
#include <chrono>
#include <optional>
#include <variant>

#include "cutune/cluster/world.hpp"
#include "cutune/worker/protocol.hpp"

namespace cutune::cluster {

template <class M>
void send_message(World& world, int dest, int tag, const M& m,
                  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
                  std::chrono::microseconds longest_pause = kLongestPause) {
  world.send(dest, tag, worker::to_bytes(worker::encode(m)), deadline, longest_pause);
}

/// Whichever of Ms comes next from `source` on `tag`; nullopt when none came by `deadline`.
template <class... Ms>
std::optional<std::variant<Ms...>> receive_message(
    World& world, int source, int tag, std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
    std::chrono::microseconds longest_pause = kLongestPause) {
  const auto bytes = world.receive(source, tag, deadline, longest_pause);
  if (!bytes) return std::nullopt;
  return worker::decode_one_of<Ms...>(worker::from_bytes(bytes->data(), bytes->size()));
}

/// A message that is there already, or nullopt at once.
template <class... Ms>
std::optional<std::variant<Ms...>> try_receive_message(World& world, int source, int tag) {
  const auto bytes = world.try_receive(source, tag);
  if (!bytes) return std::nullopt;
  return worker::decode_one_of<Ms...>(worker::from_bytes(bytes->data(), bytes->size()));
}

}  // namespace cutune::cluster
