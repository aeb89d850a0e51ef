// gpusort-bench-host-paths: the machine's ceilings for the host side of an out-of-core sort, each
// timed on its own: faulting in fresh pages of an output file's shared map (MADV_POPULATE_WRITE),
// mapped as the engine maps its output (its space reserved with fallocate, huge pages asked for)
// and, for contrast, sparse with small pages; faulting in anonymous memory; copying into pages
// already faulted in; pinning populated memory for the GPU (cudaHostRegister) and DMA between the
// device and registered memory in the pieces a merge uses (one part of each run per slice). And the
// two ways ranks of one host could read each other's sorted runs: shared memory as an MPI window
// holds it (tmpfs pages, here a memfd; huge pages asked for, given only where the kernel's
// shmem_enabled allows), and another process's own memory copied by process_vm_readv.
// Threads share each job in equal blocks.
//
//   gpusort-bench-host-paths FILE GIB [THREADS...]
//
// FILE is created (and removed at the end) on the file system under test.
#include <cuda_runtime.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

// Runs job(begin, end) over [0, bytes) cut into `threads` equal blocks (2 MiB aligned); returns seconds.
double parallel(std::size_t bytes, unsigned threads, const std::function<void(std::size_t, std::size_t)>& job) {
    const std::size_t align = std::size_t{2} << 20;
    const std::size_t block = (bytes / threads + align - 1) / align * align;
    const double start = now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        const std::size_t begin = std::min(bytes, t * block), end = std::min(bytes, begin + block);
        if (begin < end) pool.emplace_back(job, begin, end);
    }
    for (auto& th : pool) th.join();
    return now() - start;
}

void report(const char* what, unsigned threads, std::size_t bytes, double seconds) {
    std::printf("%-68s threads %3u  %6.3f s  %6.2f GB/s\n", what, threads, seconds, bytes / seconds / 1e9);
    std::fflush(stdout);
}

// A fresh file of `bytes` mapped shared: as the engine maps its output (io::FileMapping on space
// reserved by File::allocate), or sparse (ftruncate) with small pages.
std::byte* map_file(const std::string& path, std::size_t bytes, int& fd, bool as_the_engine) {
    ::unlink(path.c_str());
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    int sized = -1;
    if (fd >= 0)
        sized = as_the_engine ? ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) : ::ftruncate(fd, static_cast<off_t>(bytes));
    if (sized != 0) {
        std::perror(path.c_str());
        std::exit(1);
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    if (as_the_engine) ::madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<std::byte*>(p);
}

void unmap_file(const std::string& path, std::byte* p, std::size_t bytes, int fd) {
    ::munmap(p, bytes);
    ::close(fd);
    ::unlink(path.c_str());
}

std::byte* anonymous(std::size_t bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    ::madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<std::byte*>(p);
}

// Shared memory as the ranks of a host would share it: tmpfs pages (an MPI window is a file in
// /dev/shm), mapped shared, huge pages asked for.
std::byte* shared_memory(std::size_t bytes, int& fd) {
    fd = ::memfd_create("gpusort-bench-host-paths", MFD_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        std::perror("memfd_create");
        std::exit(1);
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    ::madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<std::byte*>(p);
}

// Copies [begin, end) of `from` in process `pid` to the same offsets of `to` by process_vm_readv.
void read_other_process(pid_t pid, const std::byte* from, std::byte* to, std::size_t begin, std::size_t end) {
    while (begin < end) {
        const iovec local{to + begin, end - begin};
        const iovec remote{const_cast<std::byte*>(from) + begin, end - begin};
        const ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n <= 0) {
            std::perror("process_vm_readv");
            std::exit(1);
        }
        begin += static_cast<std::size_t>(n);
    }
}

// On mappings that `make` gives (and `release` undoes): fresh pages faulted in, a copy from `source`
// into them, and a copy into fresh ones.
void fresh_and_faulted(const std::string& name, unsigned threads, std::size_t bytes, const std::byte* source,
                       const std::function<std::byte*(int&)>& make, const std::function<void(std::byte*, int)>& release) {
    int fd = -1;
    std::byte* out = make(fd);
    report((name + ": fresh pages faulted in (populate)").c_str(), threads, bytes,
           parallel(bytes, threads, [&](std::size_t b, std::size_t e) { ::madvise(out + b, e - b, MADV_POPULATE_WRITE); }));
    report((name + ": copy into faulted-in pages").c_str(), threads, bytes,
           parallel(bytes, threads, [&](std::size_t b, std::size_t e) { std::memcpy(out + b, source + b, e - b); }));
    release(out, fd);
    out = make(fd);
    report((name + ": copy into fresh pages").c_str(), threads, bytes,
           parallel(bytes, threads, [&](std::size_t b, std::size_t e) { std::memcpy(out + b, source + b, e - b); }));
    release(out, fd);
}

// Another process's memory: a child holds `source` (the parent's pages, shared until written) until
// the parent, which may read a child's memory, has copied it into `target`.
void copy_from_another_process(unsigned threads, std::size_t bytes, const std::byte* source, std::byte* target) {
    int wait_pipe[2];
    if (::pipe(wait_pipe) != 0) {
        std::perror("pipe");
        std::exit(1);
    }
    const pid_t child = ::fork();
    if (child < 0) {
        std::perror("fork");
        std::exit(1);
    }
    if (child == 0) {
        ::close(wait_pipe[1]);
        char c;
        while (::read(wait_pipe[0], &c, 1) > 0) {
        }
        ::_exit(0);
    }
    ::close(wait_pipe[0]);
    report("another process's memory: process_vm_readv into faulted-in pages", threads, bytes,
           parallel(bytes, threads, [&](std::size_t b, std::size_t e) { read_other_process(child, source, target, b, e); }));
    ::close(wait_pipe[1]);
    ::waitpid(child, nullptr, 0);
}

// Every copy on `threads` threads: into file maps (as the engine maps its output, and sparse),
// anonymous memory, shared memory and from another process's memory.
void bench_copies(const std::string& path, unsigned threads, std::size_t bytes, const std::byte* source) {
    for (const bool as_the_engine : {true, false})
        fresh_and_faulted(as_the_engine ? "file map (reserved, huge pages)" : "file map (sparse, small pages)", threads, bytes,
                          source, [&](int& fd) { return map_file(path, bytes, fd, as_the_engine); },
                          [&](std::byte* p, int fd) { unmap_file(path, p, bytes, fd); });
    std::byte* target = anonymous(bytes);
    report("anonymous: copy into fresh pages", threads, bytes,
           parallel(bytes, threads, [&](std::size_t b, std::size_t e) { std::memcpy(target + b, source + b, e - b); }));
    report("anonymous: copy into faulted-in pages", threads, bytes,
           parallel(bytes, threads, [&](std::size_t b, std::size_t e) { std::memcpy(target + b, source + b, e - b); }));
    fresh_and_faulted("shared memory (tmpfs)", threads, bytes, source, [&](int& fd) { return shared_memory(bytes, fd); },
                      [&](std::byte* p, int fd) {
                          ::munmap(p, bytes);
                          ::close(fd);
                      });
    copy_from_another_process(threads, bytes, source, target);
    ::munmap(target, bytes);
}

// DMA between the device and registered `source` in 512 MiB slices: to the device in 1, 33 and 256
// parts per slice (a merge's parts of its runs), and back in whole slices.
void bench_dma(std::byte* source, std::size_t bytes) {
    const std::size_t slice = std::size_t{512} << 20;
    void* device = nullptr;
    check(cudaMalloc(&device, slice), "cudaMalloc");
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    for (std::size_t parts : {std::size_t{1}, std::size_t{33}, std::size_t{256}}) {
        const std::size_t part = slice / parts;
        const double start = now();
        for (std::size_t s = 0; s + slice <= bytes; s += slice)
            for (std::size_t p = 0; p < parts; ++p)
                check(cudaMemcpyAsync(static_cast<std::byte*>(device) + p * part, source + s + p * part, part,
                                      cudaMemcpyHostToDevice, stream),
                      "cudaMemcpyAsync");
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        const std::string what = "DMA to the device, " + std::to_string(parts) + " parts per 512 MiB";
        report(what.c_str(), 1, bytes / slice * slice, now() - start);
    }
    const double start = now();
    for (std::size_t s = 0; s + slice <= bytes; s += slice)
        check(cudaMemcpyAsync(source + s, device, slice, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    report("DMA from the device, 512 MiB pieces", 1, bytes / slice * slice, now() - start);
}

// Pinning for DMA: populated memory registered whole, DMA in merge-sized parts, the registration
// undone; and pinned memory allocated as such.
void bench_pinning(std::byte* source, std::size_t bytes) {
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaFree(nullptr), "cudaFree");
    double start = now();
    check(cudaHostRegister(source, bytes, cudaHostRegisterDefault), "cudaHostRegister");
    report("cudaHostRegister of populated memory", 1, bytes, now() - start);
    bench_dma(source, bytes);
    start = now();
    check(cudaHostUnregister(source), "cudaHostUnregister");
    report("cudaHostUnregister", 1, bytes, now() - start);

    start = now();
    void* pinned = nullptr;
    check(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault), "cudaHostAlloc");
    report("cudaHostAlloc", 1, bytes, now() - start);
    check(cudaFreeHost(pinned), "cudaFreeHost");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: gpusort-bench-host-paths FILE GIB [THREADS...]\n");
        return 2;
    }
    const std::string path = argv[1];
    const std::size_t bytes = std::strtoull(argv[2], nullptr, 10) << 30;
    std::vector<unsigned> thread_counts;
    for (int i = 3; i < argc; ++i) thread_counts.push_back(static_cast<unsigned>(std::atoi(argv[i])));
    if (thread_counts.empty()) thread_counts = {1, 4, 8, 16};
    const unsigned most = *std::max_element(thread_counts.begin(), thread_counts.end());

    std::byte* source = anonymous(bytes);
    report("anonymous memory faulted in (populate)", most, bytes,
           parallel(bytes, most, [&](std::size_t b, std::size_t e) { ::madvise(source + b, e - b, MADV_POPULATE_WRITE); }));
    parallel(bytes, most, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; i += 8) std::memcpy(source + i, &i, 8);
    });
    for (unsigned threads : thread_counts) bench_copies(path, threads, bytes, source);
    bench_pinning(source, bytes);
    return 0;
}
