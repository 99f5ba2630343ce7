#include "coordinator/service/control_service.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/common/status_macros.h"

namespace fleetmark::service {

grpc::ServerUnaryReactor* ControlServiceImpl::CreateSchedule(grpc::CallbackServerContext* context,
                                                             const v1::CreateScheduleRequest* request,
                                                             v1::Schedule* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    // The rules each fire checks, checked now, not failed at every fire.
    FLEETMARK_ASSIGN_OR_RETURN(const absl::Time next, runs_.CheckSchedule(request->schedule()));
    FLEETMARK_ASSIGN_OR_RETURN(*response, store_.CreateSchedule(request->schedule(), next));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::ListSchedules(grpc::CallbackServerContext* context,
                                                            const v1::ListSchedulesRequest*,
                                                            v1::ListSchedulesResponse* response) {
  return Async(context, [this, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::Schedule> schedules, store_.ListSchedules());
    for (v1::Schedule& s : schedules) *response->add_schedules() = std::move(s);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::DeleteSchedule(grpc::CallbackServerContext* context,
                                                             const v1::DeleteScheduleRequest* request, v1::Empty*) {
  return Async(context, [this, request] { return store_.DeleteSchedule(request->name()); });
}

grpc::ServerUnaryReactor* ControlServiceImpl::SetSchedulePaused(grpc::CallbackServerContext* context,
                                                                const v1::SetSchedulePausedRequest* request,
                                                                v1::Schedule* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_RETURN_IF_ERROR(store_.SetSchedulePaused(request->name(), request->paused()));
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::Schedule> schedules, store_.ListSchedules());
    for (v1::Schedule& s : schedules) {
      if (s.name() == request->name()) *response = std::move(s);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::RunSchedule(grpc::CallbackServerContext* context,
                                                          const v1::RunScheduleRequest* request,
                                                          v1::RunInfo* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    if (!options_.run_schedule)
      return absl::FailedPreconditionError("this coordinator has no scheduler to run schedules");
    FLEETMARK_ASSIGN_OR_RETURN(*response, options_.run_schedule(request->name()));
    dispatcher_.WakeAllIdle();  // as after a sweep's fires
    return absl::OkStatus();
  });
}

}  // namespace fleetmark::service
