using NUnit.Framework;

namespace Arsim.Host.Tests
{
    [TestFixture]
    public class HostOptionsTests
    {
        [Test]
        public void WithoutArgumentsTheHostServesLoopbackPort5555()
        {
            var options = HostOptions.Parse(new string[0]);
            Assert.AreEqual("tcp://127.0.0.1:5555", options.Address);
            Assert.IsFalse(options.AllowRemote);
            Assert.AreEqual(128L << 20, options.MaxRequestBytes);
            Assert.IsFalse(options.Debug);
            Assert.IsFalse(options.Help);
        }

        [Test]
        public void TheLaunchersArgumentsAreRead()
        {
            var options = HostOptions.Parse(new[] { "--address", "tcp://0.0.0.0:6001", "--max-request-mib", "16", "--allow-remote", "--log-level", "debug" });
            Assert.AreEqual("tcp://0.0.0.0:6001", options.Address);
            Assert.IsTrue(options.AllowRemote);
            Assert.AreEqual(16L << 20, options.MaxRequestBytes);
            Assert.IsTrue(options.Debug);
        }

        [Test]
        public void ValuesMayFollowAnEqualsSign()
        {
            var options = HostOptions.Parse(new[] { "--address=tcp://localhost:7000", "--max-request-mib=1", "--log-level=info" });
            Assert.AreEqual("tcp://localhost:7000", options.Address);
            Assert.AreEqual(1L << 20, options.MaxRequestBytes);
            Assert.IsFalse(options.Debug);
        }

        [TestCase(new[] { "--port", "5555" }, "unknown argument '--port'")]
        [TestCase(new[] { "tcp://127.0.0.1:5555" }, "unknown argument 'tcp://127.0.0.1:5555'")]
        [TestCase(new[] { "--address" }, "--address needs a value")]
        [TestCase(new[] { "--max-request-mib" }, "--max-request-mib needs a value")]
        [TestCase(new[] { "--max-request-mib", "lots" }, "a whole number of MiB from 1 to 1048576, got 'lots'")]
        [TestCase(new[] { "--max-request-mib", "0" }, "got '0'")]
        [TestCase(new[] { "--max-request-mib", "-3" }, "got '-3'")]
        [TestCase(new[] { "--max-request-mib", "1.5" }, "got '1.5'")]
        [TestCase(new[] { "--max-request-mib", "99999999999999999999" }, "got '99999999999999999999'")]
        [TestCase(new[] { "--log-level", "verbose" }, "--log-level is info or debug, got 'verbose'")]
        [TestCase(new[] { "--allow-remote=yes" }, "--allow-remote takes no value")]
        public void ABadCommandLineIsRefusedSayingWhy(string[] args, string reason)
        {
            Expect.Contains(reason, Assert.Throws<UsageException>(() => HostOptions.Parse(args)).Message);
        }

        [Test]
        public void HelpAsksForTheUsage()
        {
            Assert.IsTrue(HostOptions.Parse(new[] { "--help" }).Help);
            Expect.Contains("--log-level info|debug", HostOptions.Usage);
        }
    }
}
