#!/usr/bin/python3
"""A real gRPC server on loopback for Lookout's grpc tests (Debian's python3-grpcio).

Serves the standard health service, grpc.health.v1.Health/Check, without generated code: the
request and the answer are encoded by hand (field 1 of each). Services and their answers:
  ""           SERVING          (the server as a whole)
  "ok"         SERVING
  "down"       NOT_SERVING
  "slow"       SERVING after 3 s
  anything else: status NOT_FOUND, as grpc's own health servicer answers.
With --no-health the server has no health service at all (UNIMPLEMENTED). Prints
"listening PORT" once it accepts connections and runs until killed.
"""
import argparse, sys, time
from concurrent import futures
import grpc

SERVING, NOT_SERVING = 1, 2
ANSWERS = {"": SERVING, "ok": SERVING, "down": NOT_SERVING, "slow": SERVING}


def service_of(request):
    # HealthCheckRequest { string service = 1; }
    if len(request) >= 2 and request[0] == 0x0A:
        length = request[1]
        return request[2:2 + length].decode("utf-8", "replace")
    return ""


def check(request, context):
    service = service_of(request)
    if service not in ANSWERS:
        context.abort(grpc.StatusCode.NOT_FOUND, "unknown service " + service)
    if service == "slow":
        time.sleep(3)
    # HealthCheckResponse { ServingStatus status = 1; }
    return bytes([0x08, ANSWERS[service]])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-health", action="store_true")
    options = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    if not options.no_health:
        handler = grpc.method_handlers_generic_handler(
            "grpc.health.v1.Health",
            {"Check": grpc.unary_unary_rpc_method_handler(check, request_deserializer=None, response_serializer=None)})
        server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print("listening", port, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    sys.exit(main())
