#!/usr/bin/python3
"""A real SMTP server on loopback for Lookout's email tests (aiosmtpd, Debian's python3-aiosmtpd).

STARTTLS with the given certificate is required before AUTH (LOGIN or PLAIN, one user); every
accepted message is written to DIR as N.eml, with the envelope in N.json. Prints "listening PORT"
once it accepts connections and runs until killed.
"""
import argparse, asyncio, json, os, ssl, sys
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Saver:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        base = os.path.join(self.directory, str(self.count))
        with open(base + ".eml", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        with open(base + ".json", "w") as f:
            json.dump({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                       "tls": session.ssl is not None, "authenticated": session.authenticated}, f)
        return "250 Message accepted for delivery"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    args = parser.parse_args()

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == args.user and auth_data.password.decode() == args.password
        return AuthResult(success=ok)

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
    controller = Controller(Saver(args.dir), hostname="127.0.0.1", port=args.port, tls_context=context,
                            require_starttls=True, authenticator=authenticate, auth_required=True,
                            auth_require_tls=True)
    controller.start()
    print(f"listening {args.port}", flush=True)
    try:
        asyncio.get_event_loop().run_forever()
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


if __name__ == "__main__":
    sys.exit(main())
