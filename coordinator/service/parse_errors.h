// Answers a request that cannot be parsed with INVALID_ARGUMENT and a reason.
//
// gRPC 1.51's callback handlers (grpcpp/impl/codegen/server_callback_handlers.h,
// CallbackUnaryHandler::RunHandler and its server-streaming twin) finish a call whose
// request fails to deserialize with a hard-coded UNIMPLEMENTED and an empty message,
// before the service method (and so its token check) is ever called; the handler offers
// no hook. A server interceptor does see that status at PRE_SEND_STATUS and may replace
// it (ModifySendStatus), which is what this does: for a method our services declare (a
// call to an unknown method keeps UNIMPLEMENTED), the status becomes `authorize`'s
// refusal if the caller is not authorized, else INVALID_ARGUMENT naming the request type
// ("the request is not a valid fleetmark.v1.SubmitRunRequest ..."). Our handlers never
// finish with UNIMPLEMENTED and no message, so nothing else is rewritten.
//
// Usage:
//   builder.experimental().SetInterceptorCreators(
//       MakeParseErrorInterceptors([&](const std::string& method, const grpc::ServerContextBase& c) {...}));
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

namespace fleetmark::service {

// OK to answer the parse error, or the status to answer instead (UNAUTHENTICATED).
// `method` is gRPC's "/package.Service/Method". Called on gRPC threads: must be
// thread-safe and quick.
using ParseErrorAuthorizer =
    std::function<grpc::Status(const std::string& method, const grpc::ServerContextBase& context)>;

// The interceptor factories to pass to ServerBuilder::experimental().SetInterceptorCreators.
std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> MakeParseErrorInterceptors(
    ParseErrorAuthorizer authorize);

// The status a parse failure of `method`'s request gets before authorization:
// InvalidArgument naming the method and its request type; OK when no fleetmark.v1
// service declares `method` (then gRPC's UNIMPLEMENTED stands: the method does not
// exist, or is one of gRPC's own services, whose descriptors are linked whether or not
// they are served).
grpc::Status ParseErrorStatus(const std::string& method);

}  // namespace fleetmark::service
