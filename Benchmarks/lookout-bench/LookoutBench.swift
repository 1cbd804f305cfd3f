// lookout-bench: the measurements behind `make bench`. Each subcommand prints Markdown table
// rows: | benchmark | command | figure | reference | ratio |.
import Foundation
import LookoutCore
import LookoutWeb
import MicroHTTPServer
import ResilientHTTP

@main
enum LookoutBench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "--version":
            print(LookoutVersion.string)
        case "decisions":
            decisions()
        case "memory":
            await memory(sources: max(1, min(Int(arguments.dropFirst().first ?? "") ?? 10_000, 100_000)))
        case "store":
            do { try store() } catch {
                FileHandle.standardError.write(Data("lookout-bench store: \(error)\n".utf8))
                exit(1)
            }
        case "status":
            try status()
        case "metrics":
            // Healthy sources, then sources that fail one probe in seven (with retries), per detail.
            for (detail, failing) in [(MetricsDetail.default, false), (.default, true), (.full, true)] {
                let context = try LookoutContext(monitor: populatedMonitor(10_000, detail: detail, failing: failing))
                let which = failing ? "sources failing one probe in seven" : "healthy sources"
                let time = milliseconds(rounds: 21) { _ = MetricsExposition(context: context).renderBody() }
                let body = MetricsExposition(context: context).renderBody()
                let text = String(decoding: UnsafeRawBufferPointer(start: body.pointer, count: body.count), as: UTF8.self)
                let series = text.split(separator: "\n").filter { $0.contains("source=\"source-1\"") }.count
                row(
                    "/metrics at 10000 \(which), detail \(detail.rawValue) (\(series) series a source)", "lookout-bench metrics",
                    String(format: "%.1f ms", time), "target < 100 ms", String(format: "%.2f", time / 100))
                // What a Prometheus scrape (Accept-Encoding: gzip) costs on top, and what it saves.
                var compressedBytes = 0
                let gzip = milliseconds(rounds: 9) {
                    compressedBytes = Gzip.compress(UnsafeRawBufferPointer(start: body.pointer, count: body.count))?.count ?? 0
                }
                row(
                    "/metrics gzip at 10000 \(which), detail \(detail.rawValue) (\(body.count / 1024) KiB → \(compressedBytes / 1024) KiB)",
                    "lookout-bench metrics",
                    String(format: "%.1f ms", gzip), "render", String(format: "%.2f", gzip / time))
            }
        case "page":
            let page = StatusPage(context: try LookoutContext(monitor: populatedMonitor(1_000, history: true)))
            let time = milliseconds(rounds: 21) { _ = page.renderBytes() }
            row(
                "status page at 1000 sources, 90-day bars", "lookout-bench page", String(format: "%.1f ms", time), "target < 50 ms",
                String(format: "%.2f", time / 50))
        case "history":
            let sources = arguments.count > 1 ? Int(arguments[1]) ?? 10 : 10
            let days = arguments.count > 2 ? Int(arguments[2]) ?? 400 : 400
            do {
                try historyQueries()
                try history(sources: max(1, min(sources, 10_000)), days: max(1, min(days, 3_000)))
            } catch {
                FileHandle.standardError.write(Data("lookout-bench history: \(error)\n".utf8))
                exit(1)
            }
        case "sla":
            let sources = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
            let months = arguments.count > 2 ? Int(arguments[2]) ?? 12 : 12
            do {
                try sla(sources: max(1, min(sources, 100_000)), months: max(1, min(months, 12)), keepAt: arguments.count > 3 ? arguments[3] : nil)
            } catch {
                FileHandle.standardError.write(Data("lookout-bench sla: \(error)\n".utf8))
                exit(1)
            }
        case "probes":
            guard arguments.count >= 4, let count = Int(arguments[2]), let concurrency = Int(arguments[3]) else { usage() }
            await probes(url: arguments[1], count: count, concurrency: concurrency)
        default:
            usage()
        }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(
            Data(
                "usage: lookout-bench decisions | store | status | metrics | page | probes URL COUNT CONCURRENCY | history [SOURCES] [DAYS] | --version\n".utf8)
        )
        exit(2)
    }

    /// Nanoseconds per breaker permission+record, per retry decision, per token-bucket take.
    static func decisions() {
        let rounds = 2_000_000
        var breaker = CircuitBreaker(settings: CircuitBreakerSettings(failureThreshold: 5))
        var now: Int64 = 1_700_000_000_000
        let breakerNs = measure(rounds) { index in
            now += 1
            _ = breaker.acquirePermission(nowMs: now)
            _ = breaker.record(failure: index % 7 == 0 ? .serverError : nil, nowMs: now, random: 0.5)
        }
        let policy = RetryPolicy.standard
        var sink = 0
        let retryNs = measure(rounds) { index in
            if case .retry = policy.decide(
                category: index & 1 == 0 ? .serverError : .timeout, failedAttempt: 1 + index % 3, serverWait: nil,
                remaining: .seconds(30), random: 0.25)
            {
                sink &+= 1
            }
        }
        var bucket = TokenBucket(ratePerSecond: 1_000_000, burst: 1_000)
        let bucketNs = measure(rounds) { index in
            if bucket.take(nowMs: now + Int64(index / 1000)) == nil { sink &+= 1 }
        }
        var budget = RetryBudget()
        let budgetNs = measure(rounds) { index in
            budget.recordCall(nowMs: now + Int64(index))
            if index % 5 == 0, budget.tryAcquireRetry(nowMs: now + Int64(index)) { sink &+= 1 }
        }
        precondition(sink >= 0)
        row(
            "circuit breaker decision (permission + outcome)", "lookout-bench decisions", String(format: "%.0f ns", breakerNs), "target < 1000 ns",
            String(format: "%.3f", breakerNs / 1000))
        row("retry decision", "lookout-bench decisions", String(format: "%.0f ns", retryNs), "target < 1000 ns", String(format: "%.3f", retryNs / 1000))
        row("token bucket take", "lookout-bench decisions", String(format: "%.0f ns", bucketNs), "target < 1000 ns", String(format: "%.3f", bucketNs / 1000))
        row(
            "retry budget call + retry", "lookout-bench decisions", String(format: "%.0f ns", budgetNs), "target < 1000 ns",
            String(format: "%.3f", budgetNs / 1000))
    }

    /// Fresh-connection probes through the full resilient client: probes per second and CPU
    /// microseconds (user + system, all threads) per probe. The callers run on the transfer
    /// thread, as `lookout serve`'s probes do, so no call wakes another thread.
    static func probes(url: String, count: Int, concurrency: Int) async {
        let client = ResilientClient()
        client.configure(upstream: "bench", policy: UpstreamPolicy(rateLimit: nil))
        let request = CallRequest(TransferRequest(url: url, timeout: .seconds(10)), singleFlight: false)
        let cpuBefore = cpuSeconds()
        let clock = ContinuousClock()
        let started = clock.now
        let failures = await withTaskGroup(of: Int.self) { group in
            let perWorker = count / concurrency
            for _ in 0..<concurrency {
                group.addTask(executorPreference: client.transport.executor) {
                    var failed = 0
                    for _ in 0..<perWorker where await !client.call(upstream: "bench", request).ok { failed += 1 }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        let elapsed = (clock.now - started).seconds
        let cpu = cpuSeconds() - cpuBefore
        let done = (count / concurrency) * concurrency
        let command = "lookout-bench probes \(url) \(count) \(concurrency)"
        row("fresh-connection probes per second (\(concurrency) in flight)", command, String(format: "%.0f /s", Double(done) / elapsed), "", "")
        row("CPU per fresh-connection probe", command, String(format: "%.1f µs", cpu / Double(done) * 1e6), "", "")
        if failures > 0 { row("failed probes", command, "\(failures)", "", "") }
    }

    static func measure(_ rounds: Int, _ body: (Int) -> Void) -> Double {
        for index in 0..<1000 { body(index) }  // warm up
        let clock = ContinuousClock()
        let started = clock.now
        for index in 0..<rounds { body(index) }
        return (clock.now - started).seconds * 1e9 / Double(rounds)
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func row(_ name: String, _ command: String, _ figure: String, _ reference: String, _ ratio: String) {
        print("| \(name) | `\(command)` | \(figure) | \(reference) | \(ratio) |")
    }
}
