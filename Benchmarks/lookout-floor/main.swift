// lookout-floor: the floor under Lookout's memory and start-up. A Swift process that links what
// Lookout must (GRDB and so Foundation, SQLite, libcurl, libmicrohttpd) and does the least a
// monitor can with them: opens its database, serves /metrics from libmicrohttpd on its own
// thread, and GETs each of SOURCES URLs every INTERVAL_MS through one libcurl multi handle with
// Lookout's options, writing each answer's status to the database. No config, no Lookout code.
// What Lookout measures above this is its own; what this measures above blackbox_exporter is the
// price of the libraries, which no change to Lookout's code can take off.
//
// usage: lookout-floor PORT URL SOURCES INTERVAL_MS   (listens on 127.0.0.1:PORT)
import CCurl
import CMicroHTTPD
import GRDB
import Glibc

func fail(_ message: String, status: Int32) -> Never {
    let line = Array((message + "\n").utf8)
    _ = write(2, line, line.count)
    exit(status)
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func run() throws -> Never {
    let arguments = CommandLine.arguments
    guard arguments.count == 5, let port = UInt16(arguments[1]), port > 0, let sources = Int(arguments[3]),
        (1...100_000).contains(sources), let intervalMilliseconds = Int32(arguments[4]), intervalMilliseconds > 0
    else {
        fail("usage: lookout-floor PORT URL SOURCES INTERVAL_MS", status: 2)
    }
    let url = arguments[2]

    let database = try DatabaseQueue()
    try database.write { db in
        try db.execute(sql: "CREATE TABLE answers (source INTEGER NOT NULL, status INTEGER NOT NULL, at REAL NOT NULL)")
    }

    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let daemon = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            lookout_mhd_start(
                0, socketAddress,
                { _, connection, _, _, _, _, _, _ in
                    let body = "lookout_floor_up 1\n"
                    var utf8 = Array(body.utf8)
                    let response = MHD_create_response_from_buffer(utf8.count, &utf8, lookout_mhd_copy_mode())
                    defer { MHD_destroy_response(response) }
                    return MHD_queue_response(connection, 200, response)
                }, nil, nil, nil, nil, nil, 1024, 10, 64 * 1024, nil, nil)
        }
    }
    guard daemon != nil else {
        fail("lookout-floor: cannot listen on 127.0.0.1:\(port)", status: 1)
    }

    curl_global_init(Int(CURL_GLOBAL_ALL))
    let multi = curl_multi_init()
    let headers = curl_slist_append(nil, "Connection: close")
    let discard: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { _, size, count, _ in
        size * count
    }
    let handles = (0..<sources).map { _ in curl_easy_init()! }
    func start(_ source: Int) {
        let easy = handles[source]
        curl_easy_reset(easy)
        _ = lookout_curl_setopt_string(easy, CURLOPT_URL, url)
        _ = lookout_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = lookout_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, 10_000)
        _ = lookout_curl_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1)
        _ = lookout_curl_setopt_long(easy, CURLOPT_FORBID_REUSE, 1)
        _ = lookout_curl_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")
        _ = lookout_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headers)
        _ = lookout_curl_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, discard)
        _ = lookout_curl_setopt_write_function(easy, CURLOPT_HEADERFUNCTION, discard)
        _ = lookout_curl_setopt_ptr(easy, CURLOPT_PRIVATE, UnsafeRawPointer(bitPattern: source + 1))
        curl_multi_add_handle(multi, easy)
    }

    let interval = Double(intervalMilliseconds) / 1000
    var due = (0..<sources).map { now() + interval * Double($0) / Double(sources) }
    var inFlight = [Bool](repeating: false, count: sources)
    while true {
        let moment = now()
        for source in 0..<sources where !inFlight[source] && due[source] <= moment {
            inFlight[source] = true
            due[source] += interval
            start(source)
        }
        var running: Int32 = 0
        var left: Int32 = 0
        curl_multi_perform(multi, &running)
        var answers: [(Int, Int)] = []
        while let message = curl_multi_info_read(multi, &left) {
            guard lookout_curl_msg_is_done(message) == 1, let easy = lookout_curl_msg_easy(message) else { continue }
            var slot: UnsafeMutableRawPointer?
            var status = 0
            _ = lookout_curl_getinfo_ptr(easy, CURLINFO_PRIVATE, &slot)
            _ = lookout_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            curl_multi_remove_handle(multi, easy)
            let source = Int(bitPattern: slot) - 1
            inFlight[source] = false
            answers.append((source, status))
        }
        if !answers.isEmpty {
            try database.write { db in
                for (source, status) in answers {
                    try db.execute(sql: "INSERT INTO answers VALUES (?, ?, ?)", arguments: [source, status, moment])
                }
                try db.execute(sql: "DELETE FROM answers WHERE at < ?", arguments: [moment - 60])
            }
        }
        let next = due.enumerated().filter { !inFlight[$0.offset] }.map(\.element).min() ?? moment + interval
        curl_multi_poll(multi, nil, 0, Int32(max(1, min(1000, (next - now()) * 1000))), nil)
    }
}

try run()
