#include "engine/common/tls_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace fleetmark {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CtxPtr = std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, Deleter<SSL, SSL_free>>;

BioPtr MemBio(const std::string& pem) { return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))); }

// OpenSSL's reason for the last error on this thread ("" if none); clears the queue.
std::string LastSslError() {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return "";
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : absl::StrCat("OpenSSL error ", code);
}

// "host:port" of a gRPC target or address; false if there is none.
bool SplitAddress(absl::string_view address, std::string* host, std::string* port) {
  if (!absl::ConsumePrefix(&address, "ipv4:") && !absl::ConsumePrefix(&address, "ipv6:") &&
      !absl::ConsumePrefix(&address, "dns:///")) {
    absl::ConsumePrefix(&address, "dns:");
  }
  if (const size_t comma = address.find(','); comma != absl::string_view::npos) address = address.substr(0, comma);
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos || address.substr(close + 1, 1) != ":") return false;
    *host = std::string(address.substr(1, close - 1));
    *port = std::string(address.substr(close + 2));
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return false;
    *host = std::string(address.substr(0, colon));
    *port = std::string(address.substr(colon + 1));
  }
  return !host->empty() && !port->empty();
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A connected TCP socket (blocking, with send/receive timeouts of `timeout`), or -1.
int Connect(const std::string& host, const std::string& port, absl::Duration timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int connected = -1;
  for (addrinfo* ai = found; ai != nullptr && connected < 0; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    bool ok = ::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (!ok && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      socklen_t length = sizeof(error);
      ok = ::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) == 1 &&
           ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    }
    if (!ok) {
      ::close(fd);
      continue;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const timeval tv = absl::ToTimeval(timeout);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    connected = fd;
  }
  ::freeaddrinfo(found);
  return connected;
}

// Set by the message callback when the server's ServerHello arrived: the server speaks TLS.
void NoteServerHello(int write_p, int /*version*/, int content_type, const void* buf, size_t len, SSL* ssl,
                     void* /*arg*/) {
  if (write_p == 0 && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
      static_cast<const unsigned char*>(buf)[0] == SSL3_MT_SERVER_HELLO) {
    SSL_set_app_data(ssl, reinterpret_cast<void*>(1));
  }
}

bool SawServerHello(SSL* ssl) { return SSL_get_app_data(ssl) != nullptr; }

// The certificates of `pem` added to `store`; how many.
int AddCertificates(const std::string& pem, X509_STORE* store) {
  BioPtr bio = MemBio(pem);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (store != nullptr) X509_STORE_add_cert(store, cert);
    X509_free(cert);
    ++added;
  }
  ERR_clear_error();  // the loop ends on "no start line"
  return added;
}

// What a refusal by the server after the server's part of the handshake means: it can
// only be about the client certificate. `evidence`: what the server did.
std::string ClientCertificateProblem(const std::string& evidence, const std::string& where, bool had_cert,
                                     const TlsFlagNames& names) {
  if (!had_cert) {
    return absl::StrCat("the coordinator at ", where, " requires a client certificate (mutual TLS; ", evidence,
                        "): pass ", names.cert, " and ", names.key);
  }
  return absl::StrCat("the coordinator at ", where, " refused this client certificate (", evidence,
                      "): it must be signed by the CA the coordinator's --tls_client_ca_file names");
}

}  // namespace

absl::Status CheckTlsClientFiles(const TlsClientFiles& files, const TlsFlagNames& names) {
  if (!files.ca_pem.empty() && AddCertificates(files.ca_pem, nullptr) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(names.ca, ": no PEM certificate in it (\"-----BEGIN CERTIFICATE-----\")"));
  }
  if (files.cert_pem.empty() || files.key_pem.empty()) return absl::OkStatus();
  BioPtr cert_bio = MemBio(files.cert_pem);
  X509Ptr cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(names.cert, ": not a PEM certificate (", LastSslError(), ")"));
  }
  BioPtr key_bio = MemBio(files.key_pem);
  KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(names.key, ": not an unencrypted PEM private key (", LastSslError(), ")"));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(names.key, ": this private key does not belong to the certificate in ", names.cert));
  }
  return absl::OkStatus();
}

std::string DiagnoseTlsConnection(const std::string& address, const TlsClientFiles& files, const TlsFlagNames& names,
                                  absl::Duration timeout) {
  std::string host, port;
  if (!SplitAddress(address, &host, &port)) return "";
  Fd socket{Connect(host, port, timeout)};
  if (socket.fd < 0) return "";  // nothing listens: not a TLS problem
  const std::string where = absl::StrCat(host, ":", port);

  CtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (ctx == nullptr) return "";
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);  // checked after the handshake
  SSL_CTX_set_msg_callback(ctx.get(), NoteServerHello);
  const bool tls_client = !files.ca_pem.empty();
  const bool has_cert = !files.cert_pem.empty() && !files.key_pem.empty();
  if (tls_client) {
    AddCertificates(files.ca_pem, SSL_CTX_get_cert_store(ctx.get()));
    if (has_cert) {
      BioPtr cert_bio = MemBio(files.cert_pem), key_bio = MemBio(files.key_pem);
      X509Ptr cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
      KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
      if (cert == nullptr || key == nullptr || SSL_CTX_use_certificate(ctx.get(), cert.get()) != 1 ||
          SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1) {
        ERR_clear_error();
        return absl::StrCat(names.cert, "/", names.key, ": the client certificate or key is unusable");
      }
    }
  }
  SslPtr ssl(SSL_new(ctx.get()));
  if (ssl == nullptr) return "";
  SSL_set_fd(ssl.get(), socket.fd);
  // The name checked in the certificate: an IP address or a DNS name (also sent as SNI).
  const std::string name = files.server_name.empty() ? host : files.server_name;
  in6_addr ip6;
  in_addr ip4;
  const bool is_ip = ::inet_pton(AF_INET, name.c_str(), &ip4) == 1 || ::inet_pton(AF_INET6, name.c_str(), &ip6) == 1;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl.get(), name.c_str());
    X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
  }

  ERR_clear_error();
  const bool handshake_ok = SSL_connect(ssl.get()) == 1;
  const std::string handshake_error = handshake_ok ? "" : LastSslError();
  if (!tls_client) {
    if (!SawServerHello(ssl.get())) return "";  // a plaintext server: not a TLS problem
    return absl::StrCat("the coordinator at ", where, " uses TLS and this client connects in plaintext: pass ",
                        names.ca, " (the CA that signed its certificate)");
  }
  if (!SawServerHello(ssl.get())) {
    return absl::StrCat("the coordinator at ", where, " does not speak TLS (",
                        handshake_error.empty() ? "no TLS answer" : handshake_error,
                        "): it serves plaintext; connect without ", names.ca,
                        ", or start it with --tls_cert_file/--tls_key_file");
  }
  const long verify = SSL_get_verify_result(ssl.get());
  if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
    return absl::StrCat("the certificate of the coordinator at ", where, " is not issued for ", name, " (",
                        X509_verify_cert_error_string(verify), "): connect by a name or address it lists");
  }
  if (verify != X509_V_OK) {
    return absl::StrCat("the certificate of the coordinator at ", where, " is not trusted with ", names.ca, " (",
                        X509_verify_cert_error_string(verify),
                        "): the CA file must hold the CA that signed the coordinator's certificate");
  }
  if (!handshake_ok) {
    return ClientCertificateProblem(absl::StrCat("it answered \"", handshake_error, "\""), where, has_cert, names);
  }
  // TLS 1.3: the server checks the client certificate after the client's handshake
  // ended; a refusal shows on the first read, as an alert or (gRPC) as the connection
  // closed before any data. A gRPC server that accepted us sends its HTTP/2 settings.
  char byte;
  ERR_clear_error();
  errno = 0;
  const int read = SSL_read(ssl.get(), &byte, 1);
  const int read_errno = errno;
  if (read <= 0) {
    const int error = SSL_get_error(ssl.get(), read);
    const std::string reason = LastSslError();
    if (error == SSL_ERROR_SSL && absl::StrContains(reason, "alert")) {
      return ClientCertificateProblem(absl::StrCat("it answered \"", reason, "\""), where, has_cert, names);
    }
    const bool timed_out = error == SSL_ERROR_SYSCALL && (read_errno == EAGAIN || read_errno == EWOULDBLOCK);
    if (!timed_out && (error == SSL_ERROR_ZERO_RETURN || error == SSL_ERROR_SYSCALL || error == SSL_ERROR_SSL)) {
      return ClientCertificateProblem("it closed the connection right after the handshake", where, has_cert, names);
    }
  }
  ERR_clear_error();
  return "";
}

}  // namespace fleetmark
