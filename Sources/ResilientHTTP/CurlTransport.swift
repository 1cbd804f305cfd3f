internal import CCurl
import Foundation
import Synchronization

/// Runs HTTP transfers on libcurl's multi interface: one thread drives every transfer in flight,
/// and callers simply `await` their result. Cancelling the calling task aborts the transfer.
///
/// ```swift
/// let transport = CurlTransport()
/// let result = await transport.perform(TransferRequest(url: "http://127.0.0.1:9480/ok"))
/// print(result.httpStatus ?? 0)
/// ```
public final class CurlTransport: Sendable {
    private let loops: [TransferLoop]
    private let turn = Atomic<Int>(0)
    private let handles = HandlePool()

    /// The transfer threads' name, as `top -H` and `/proc/<pid>/task/*/comm` show it.
    public static let threadName = "lookout-curl"

    /// Transfer threads started by default: two where there are two cores or more. Only one is
    /// used until `adapt(toProbesPerSecond:)` is told of more than `spreadAbove` probes a second.
    public static var defaultThreads: Int { min(2, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Probes a second past which transfers are spread over every transfer thread. Two threads
    /// busy at once cost more per transfer than one doing both shares (TLS handshakes on two
    /// threads meet in OpenSSL 3's shared locks and counters, and each probe's data moves
    /// between cores): on two cores an HTTPS `/probe` took 28-40 % more CPU on two threads than
    /// the same transfers served from C on one, and as much on one. But one thread reads every
    /// answer in turn, and at thousands of probes a second an answer that has arrived waits for
    /// the rest of a turn. Measured against nginx beside a 100 ms upstream
    /// (`docs/performance.md`): at 5,000 probes a second one thread is 42-50 % busy, uses a
    /// tenth less CPU a probe than two, and reads the upstream's p95 0.5 ms higher than two do;
    /// at 7,500 a second (one round) 3.0 ms over the upstream's own against 1.2 on two, at the
    /// same CPU. So one thread up to 6,000 a second, between the two.
    public static let spreadAbove = 6_000.0

    /// How many of `loops` take new transfers: 1 until told of more than `spreadAbove` probes a
    /// second.
    private let inUse = Atomic<Int>(1)

    /// The `User-Agent` of every request, unless the request gives its own; nil sends none.
    let userAgent: String?

    /// Starts the transport's own threads (`lookout-curl`), `defaultThreads` of them unless
    /// told; they stop, aborting transfers in flight, when the transport is released. The
    /// application names itself in `userAgent` (`Lookout/0.1.0`).
    public init(threads: Int = CurlTransport.defaultThreads, userAgent: String? = nil) {
        self.userAgent = userAgent
        CurlGlobal.ensureInitialized()
        loops = (0..<max(1, threads)).map { _ in TransferLoop() }
        for loop in loops { startNamedThread(CurlTransport.threadName) { [loop] in loop.run() } }
    }

    deinit {
        for loop in loops { loop.stop() }
    }

    /// Runs the tasks that prefer it on a transfer thread, between its polls: a task that
    /// submits a transfer there hands it over without waking the thread, and resumes there
    /// without waking another. For short work around a transfer (a probe); work that takes
    /// long delays every transfer's timing and belongs elsewhere (see `ResilientClient`).
    /// While more than one thread is in use (`adapt(toProbesPerSecond:)`), each read names the
    /// next in turn; otherwise the first.
    ///
    /// ```swift
    /// let probe = Task(executorPreference: transport.executor) { await transport.perform(request) }
    /// ```
    ///
    /// A preference does not keep the transport alive: keep it while such tasks run. Jobs that
    /// arrive once it has stopped run on the global executor.
    public var executor: any TaskExecutor { nextLoop() }

    /// Easy handles kept for the next transfers.
    public var idleHandles: Int { handles.idleCount }

    /// Performs one attempt. Never throws: failures are described by the result's `curlCode`.
    /// A request with header fields for its own origin only (an `X-Api-Key`) follows redirects
    /// hop by hop, leaving them out past its origin (see `followingRedirects`), unless it says
    /// `forwardHeadersOnRedirect`.
    public func perform(_ request: TransferRequest) async -> TransferResult {
        if request.followRedirects && !request.forwardHeadersOnRedirect && CurlTransport.hasOriginOnlyFields(request) {
            return await followingRedirects(request)
        }
        return await performOnce(request)
    }

    /// One transfer, redirects followed by libcurl if the request asks for it.
    func performOnce(_ request: TransferRequest) async -> TransferResult {
        var connectTo: String?
        switch LocalhostResolution.resolve(request) {
        case .unresolved(let failure): return failure
        case .connect(let entry): connectTo = entry
        case nil: break
        }
        guard let easy = EasyHandle(request, userAgent: userAgent, pool: handles, connectTo: connectTo) else {
            return TransferResult(curlCode: Int32(CURLE_FAILED_INIT.rawValue), curlMessage: "libcurl could not create a handle")
        }
        let loop = preferredLoop() ?? nextLoop()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                easy.attach(continuation)
                loop.submit(easy)
            }
        } onCancel: {
            loop.cancel(easy)
        }
    }

    /// Uses every transfer thread for more than `spreadAbove` probes a second (the sources'
    /// schedule), one otherwise. Transfers in flight finish where they are.
    public func adapt(toProbesPerSecond rate: Double) {
        inUse.store(rate > CurlTransport.spreadAbove ? loops.count : 1, ordering: .relaxed)
    }

    /// How many transfer threads take new transfers.
    public var threadsInUse: Int { inUse.load(ordering: .relaxed) }

    private func nextLoop() -> TransferLoop {
        let count = inUse.load(ordering: .relaxed)
        return count == 1 ? loops[0] : loops[turn.add(1, ordering: .relaxed).oldValue % count]
    }

    /// The loop whose thread the current task prefers, if it prefers one of ours.
    private func preferredLoop() -> TransferLoop? {
        guard loops.count > 1, let preferred = withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor }) else {
            return loops.count == 1 ? loops[0] : nil
        }
        return loops.first { $0.asUnownedTaskExecutor() == preferred }
    }
}

/// The multi handle and the thread-safe inbox through which tasks hand transfers, and jobs of
/// the tasks that prefer this executor, to its thread.
final class TransferLoop: TaskExecutor {
    private struct Inbox {
        var jobs: [UnownedJob] = []
        /// The loop has returned: jobs go to the global executor instead.
        var stopped = false
        var submitted: [EasyHandle] = []
        var cancelled: [EasyHandle] = []
        var stopping = false
        /// Whether the loop waits in `curl_multi_poll` (or is about to) with nothing taken from
        /// here: only then does a submission need to wake it, a write to libcurl's wake-up pipe.
        var polling = false

        /// Notes one more thing for the loop; true when it must be woken to see it.
        mutating func needsWakeUp() -> Bool {
            defer { polling = false }
            return polling
        }
    }

    private let multi: MultiHandle
    private let inbox = Mutex(Inbox())

    init() {
        multi = MultiHandle()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (taken, wake) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.stopped else { return (false, false) }
            inbox.jobs.append(job)
            return (true, inbox.needsWakeUp())
        }
        if !taken { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        if wake { curl_multi_wakeup(multi.pointer) }
    }

    func submit(_ easy: EasyHandle) {
        let wake = inbox.withLock { inbox in
            inbox.submitted.append(easy)
            return inbox.needsWakeUp()
        }
        if wake { curl_multi_wakeup(multi.pointer) }
    }

    func cancel(_ easy: EasyHandle) {
        easy.cancelRequested.store(true, ordering: .relaxed)
        let wake = inbox.withLock { inbox in
            inbox.cancelled.append(easy)
            return inbox.needsWakeUp()
        }
        if wake { curl_multi_wakeup(multi.pointer) }
    }

    func stop() {
        inbox.withLock { $0.stopping = true }
        curl_multi_wakeup(multi.pointer)
    }

    /// The transfer loop; everything here runs on the transport's own thread.
    func run() {
        var active: [UnsafeMutableRawPointer: EasyHandle] = [:]
        var jobs: [UnownedJob] = []
        while true {
            // Tasks that prefer this executor run first: what they submit is taken just below.
            let stopping = inbox.withLock { inbox in
                swap(&jobs, &inbox.jobs)
                return inbox.stopping
            }
            if stopping { return shutDown(active: active, jobs: jobs) }
            // A long turn of jobs is cut into slices with libcurl's work between them, so an
            // answer that has arrived waits at most a slice to be read and timed.
            var sliceStart = ContinuousClock.now
            for (index, job) in jobs.enumerated() {
                job.runSynchronously(on: asUnownedTaskExecutor())
                if index % 8 == 7, sliceStart.duration(to: .now) > TransferLoop.jobSlice {
                    performTransfers(&active)
                    sliceStart = .now
                }
            }
            jobs.removeAll(keepingCapacity: true)
            let (submitted, cancelled) = inbox.withLock { inbox in
                defer {
                    inbox.submitted.removeAll()
                    inbox.cancelled.removeAll()
                }
                return (inbox.submitted, inbox.cancelled)
            }
            for easy in submitted {
                if easy.cancelRequested.load(ordering: .relaxed) {
                    easy.finish(code: CURLE_ABORTED_BY_CALLBACK, cancelled: true)
                } else {
                    curl_multi_add_handle(multi.pointer, easy.handle)
                    active[easy.handle] = easy
                }
            }
            for easy in cancelled where active.removeValue(forKey: easy.handle) != nil {
                curl_multi_remove_handle(multi.pointer, easy.handle)
                easy.finish(code: CURLE_ABORTED_BY_CALLBACK, cancelled: true)
            }
            performTransfers(&active)
            // Sleep only if nothing arrived meanwhile; from here on a submission wakes the poll.
            let idle = inbox.withLock { inbox -> Bool in
                inbox.polling = inbox.jobs.isEmpty && inbox.submitted.isEmpty && inbox.cancelled.isEmpty && !inbox.stopping
                return inbox.polling
            }
            if idle {
                curl_multi_poll(multi.pointer, nil, 0, 1000, nil)
                inbox.withLock { $0.polling = false }
            }
        }
    }

    /// The longest run of jobs between two turns of libcurl's work.
    static let jobSlice = Duration.microseconds(300)

    /// Lets libcurl move every transfer on, and finishes those that are done.
    private func performTransfers(_ active: inout [UnsafeMutableRawPointer: EasyHandle]) {
        var running: Int32 = 0
        curl_multi_perform(multi.pointer, &running)
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi.pointer, &remaining) {
            guard lookout_curl_msg_is_done(message) != 0, let handle = lookout_curl_msg_easy(message),
                let easy = active.removeValue(forKey: handle)
            else { continue }
            let code = lookout_curl_msg_result(message)
            curl_multi_remove_handle(multi.pointer, handle)
            easy.finish(code: code)
        }
    }

    /// Aborts every transfer, in flight or waiting, and sends the jobs of tasks that prefer this
    /// executor (those of the aborted transfers among them) to the global executor, now and
    /// from now on.
    private func shutDown(active: [UnsafeMutableRawPointer: EasyHandle], jobs: [UnownedJob]) {
        let (submitted, left) = inbox.withLock { inbox in
            inbox.stopped = true
            defer {
                inbox.submitted = []
                inbox.jobs = []
            }
            return (inbox.submitted, inbox.jobs)
        }
        for job in jobs + left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        for easy in active.values {
            curl_multi_remove_handle(multi.pointer, easy.handle)
            easy.finish(code: CURLE_ABORTED_BY_CALLBACK, cancelled: true)
        }
        for easy in submitted { easy.finish(code: CURLE_ABORTED_BY_CALLBACK, cancelled: true) }
    }
}

/// Owns the libcurl multi handle.
final class MultiHandle: @unchecked Sendable {
    // Used only by the loop thread, except curl_multi_wakeup, which libcurl allows from any thread.
    let pointer: UnsafeMutableRawPointer

    init() {
        pointer = curl_multi_init()
        lookout_curl_multi_setopt_long(pointer, CURLMOPT_MAXCONNECTS, 0)
    }

    deinit {
        curl_multi_cleanup(pointer)
    }
}
