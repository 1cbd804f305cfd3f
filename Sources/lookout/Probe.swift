import ArgumentParser
import Foundation
import LookoutCore
import LookoutService
import ResilientHTTP

struct Probe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Probes one URL, or a configured source (--config F --source NAME), now and reports what happened; exits 0 on success, 1 on failure.")

    @Argument(help: "The URL to probe.")
    var url: String?

    @Option(help: "A config file whose source to probe (with --source).")
    var config: String?

    @Option(help: "The configured source to probe, as the scheduler would (each step for a flow).")
    var source: String?

    @Option(help: ArgumentHelp("Probe kind: \(Probers.names)."))
    var kind: String = "http"

    @Option(help: "Expected SHA-256 of a download, in hex.")
    var sha256: String?

    @Option(help: "Timeout per attempt, e.g. 10s.")
    var timeout: String = "10s"

    @Flag(help: "Print one JSON object instead of a summary.")
    var json = false

    func validate() throws {
        if source != nil || config != nil {
            guard source != nil, config != nil, url == nil else { throw ValidationError("give --config and --source together, without a URL") }
            return
        }
        guard let url else { throw ValidationError("give a URL, or --config F --source NAME") }
        guard SourceKind(rawValue: kind) != nil else { throw ValidationError("--kind must be \(Probers.names)") }
        guard ConfigValues.duration(timeout) != nil else {
            throw ValidationError("--timeout \"\(timeout)\" is not a duration (use 500ms, 30s, 5m, 1h)")
        }
        if let message = Probers.prober(for: SourceKind(rawValue: kind) ?? .http).urlProblem(url) { throw ValidationError(message) }
        if let sha256, sha256.utf8.count != 64 || !sha256.utf8.allSatisfy(\.isHexDigit) {
            throw ValidationError("--sha256 must be 64 hex digits")
        }
        if sha256 != nil && kind != "download" { throw ValidationError("--sha256 applies to --kind download") }
    }

    func run() async throws {
        if let config, let name = source { return try await probeConfigured(name, config: config) }
        guard let url else { return }
        var source = SourceConfig(
            name: URLParts(url)?.bareHost ?? url, kind: SourceKind(rawValue: kind)!, url: url,
            interval: .seconds(3600), timeout: ConfigValues.duration(timeout)!)
        source.sha256 = sha256?.lowercased()
        source.policy.rateLimit = nil
        let bar = ProgressBar(enabled: source.kind == .download && !json && isatty(STDOUT_FILENO) == 1)
        let prober = SourceProber(client: ResilientClient()) { _, progress in bar.show(progress) }
        prober.configure(source)
        let result = await prober.probe(source)
        bar.finish()
        if json {
            print(ProbeReport(url: url, kind: kind, result: result).json())
        } else {
            print(ProbeReport(url: url, kind: kind, result: result).summary())
        }
        if !result.ok { throw ExitCode(1) }
    }

    /// One probe of a configured source, with its policies; a push source is judged by its
    /// job's calls, which only a running `serve` hears.
    func probeConfigured(_ name: String, config path: String) async throws {
        let (_, source) = try configuredSource(name, config: path)
        guard source.kind != .push else {
            printError("\(name) is a push source: its job calls Lookout, nothing is asked (lookout push-url \(name) --config \(path))")
            throw ExitCode(1)
        }
        let prober = SourceProber(client: ResilientClient())
        prober.configure(source)
        let result = await prober.probe(source)
        let report = ProbeReport(url: source.url, kind: source.kind.rawValue, result: result)
        print(json ? report.json() : report.summary())
        if !result.ok { throw ExitCode(1) }
    }
}

/// `lookout probe`'s output, as JSON or as a human summary.
struct ProbeReport {
    let url: String
    let kind: String
    let result: ProbeResult

    func json() -> String {
        let failure = result.failure
        func string(_ value: String?) -> String { value.map(LogfmtLogHandler.jsonString) ?? "null" }
        func number(_ value: Double) -> String { String(format: "%.6f", value) }
        let phases = result.phases
        let fields: [(String, String)] = [
            ("url", string(url)), ("kind", string(kind)), ("ok", result.ok ? "true" : "false"),
            ("category", string(failure?.category.rawValue)), ("reason", string(failure?.reason)),
            ("http_status", result.httpStatus.map(String.init) ?? "null"), ("attempts", "\(result.attempts)"),
            ("duration_seconds", number(result.durationSeconds)),
            (
                "phases",
                "{\"dns\":\(number(phases.dns)),\"connect\":\(number(phases.connect)),\"tls\":\(number(phases.tls)),\"ttfb\":\(number(phases.ttfb)),\"transfer\":\(number(phases.transfer))}"
            ),
            ("bytes", "\(result.bytes)"), ("message", string(result.message)),
            ("recovery", string(failure?.recoverySuggestion)), ("server_message", string(failure?.serverMessage)),
            ("sha256", string(result.download?.sha256)),
        ]
        let steps: [(String, String)] = result.steps.map { [("steps", "[" + $0.map(stepJSON).joined(separator: ",") + "]")] } ?? []
        return "{" + (fields + steps).map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    func stepJSON(_ step: FlowStepOutcome) -> String {
        let outcome: String = step.ok.map { $0 ? "passed" : "failed" } ?? "not run"
        let status: String = step.httpStatus.map(String.init) ?? "null"
        let reason: String = step.reason.map(LogfmtLogHandler.jsonString) ?? "null"
        let seconds = String(format: "%.6f", step.seconds)
        let name = LogfmtLogHandler.jsonString(step.name)
        return #"{"name":\#(name),"finally":\#(step.isFinally),"outcome":"\#(outcome)","http_status":\#(status),"seconds":\#(seconds),"reason":\#(reason)}"#
    }

    /// A flow's steps, one line each: what each did and how long it took.
    var stepLines: [String] {
        (result.steps ?? []).enumerated().map { index, step in
            let outcome = step.ok.map { $0 ? "passed" : "FAILED" } ?? "not run"
            let status = step.httpStatus.map { "  HTTP \($0)" } ?? ""
            let reason = step.reason.map { "  \($0)" } ?? ""
            return
                "  \(step.isFinally ? "finally" : "step \(index + 1)")  \(step.name)  \(outcome)\(status)  \(String(format: "%.0f ms", step.seconds * 1000))\(reason)"
        }
    }

    func summary() -> String {
        // A DNS answer, an echo reply or a connection has no HTTP status: it answered, or not.
        let status = result.httpStatus.map { "HTTP \($0)" } ?? (result.ok ? "answered" : "no response")
        let timing = String(format: "%.0f ms", result.durationSeconds * 1000)
        var verified = ""
        if let download = result.download, let digest = download.sha256 {
            verified = download.verified == true ? "  sha256 verified" : "  sha256 \(digest)"
            if download.resumes > 0 { verified += "  resumed \(download.resumes)×" }
        }
        guard let failure = result.failure else {
            let retried = result.attempts > 1 ? "  after \(result.attempts) attempts" : ""
            let bytes = result.httpStatus == nil && result.bytes == 0 ? "" : "  \(result.bytes) bytes"
            return (["OK  \(url)  \(status)  \(timing)\(bytes)\(verified)\(retried)"] + stepLines).joined(separator: "\n")
        }
        let attempts = "\(result.attempts) attempt\(result.attempts == 1 ? "" : "s")"
        var lines = ["FAIL  \(url)  \(status)  \(timing)  \(attempts)", "  \(failure.title) (\(failure.category.rawValue)/\(failure.reason))"]
        if let message = result.message { lines.append("  \(message)") }
        lines.append("  \(failure.recoverySuggestion)")
        return (lines + stepLines).joined(separator: "\n")
    }
}

/// A one-line progress bar for downloads, redrawn in place on a terminal.
final class ProgressBar: Sendable {
    let enabled: Bool

    init(enabled: Bool) {
        self.enabled = enabled
    }

    func show(_ progress: DownloadProgress) {
        guard enabled, progress.state == .inProgress || progress.state == .paused else { return }
        let width = 30
        let megabytes = Double(progress.bytes) / 1_048_576
        let speed = progress.throughputBytesPerSecond / 1_048_576
        var line: String
        if let ratio = progress.ratio {
            // A server may send more than it announced: the bar never goes past full.
            let filled = Int(Int64(clamping: min(1, max(0, ratio)) * Double(width)) ?? 0)
            line = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
            line += String(format: " %3.0f%%", ratio * 100)
        } else {
            line = "[" + String(repeating: "?", count: width) + "]"
        }
        line += String(format: "  %.1f MiB  %.1f MiB/s", megabytes, speed)
        if progress.state == .paused { line += "  resuming…" }
        FileHandle.standardOutput.write(Data(("\r" + line).utf8))
    }

    func finish() {
        if enabled { FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8)) }
    }
}
