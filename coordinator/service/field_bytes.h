// Bytes a length-delimited protobuf field of `length` bytes takes in its message
// (field numbers below 16: a one-byte tag, then the varint length). How the run
// builder sizes a job assignment and the result export sizes its pages without
// serializing anything.
//
// Thread-safety: a pure function.
#pragma once

#include <cstddef>

#include "google/protobuf/io/coded_stream.h"

namespace fleetmark::service {

inline size_t FieldBytes(size_t length) {
  return 1 + google::protobuf::io::CodedOutputStream::VarintSize64(length) + length;
}

}  // namespace fleetmark::service
