import Foundation

/// The standard `process_*` metrics, read from /proc as Prometheus' client libraries do.
enum ProcessMetrics {
    static func render(_ writer: ExpositionWriter) {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        {
            // Fields after the command name: state is field 3; utime 14, stime 15, starttime 22, vsize 23, rss 24.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            func field(_ number: Int) -> Double { Double(fields[number - 3]) ?? 0 }
            if fields.count > 22 {
                writer.single(
                    "process_cpu_seconds_total", type: .counter, help: "Total user and system CPU time spent in seconds.",
                    value: (field(14) + field(15)) / ticks)
                writer.single("process_virtual_memory_bytes", type: .gauge, help: "Virtual memory size in bytes.", value: field(23))
                writer.single("process_resident_memory_bytes", type: .gauge, help: "Resident memory size in bytes.", value: field(24) * pageSize)
                if let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
                    let since = Double(uptime.split(separator: " ").first ?? "")
                {
                    let boot = Date().timeIntervalSince1970 - since
                    writer.single(
                        "process_start_time_seconds", type: .gauge, help: "Start time of the process since unix epoch in seconds.",
                        value: (boot + field(22) / ticks).rounded())
                }
            }
        }
        if let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            writer.single("process_open_fds", type: .gauge, help: "Number of open file descriptors.", value: Double(descriptors.count))
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            writer.single("process_max_fds", type: .gauge, help: "Maximum number of open file descriptors.", value: Double(limit.rlim_cur))
        }
    }
}
