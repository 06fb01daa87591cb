import ArgumentParser

@main
struct Meridian: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meridian",
        abstract: "Real-time collaboration server for shared maps.",
        subcommands: [Serve.self, Load.self, Token.self],
        defaultSubcommand: Serve.self
    )
}
