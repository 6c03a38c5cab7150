//! The P4Runtime election id of every intpath session, in one place.
//!
//! A switch refuses a second stream that arbitrates with an election id
//! already in use, and makes the highest id its primary, the only client
//! whose writes, pipeline pushes and packet-outs it accepts. Two sessions
//! sharing an id therefore lock each other out, and a session with a higher
//! id than the controller's silently takes the switch from it. So every
//! session kind has its own id, ordered by who must win:
//!
//! | session                         | id  | why this rank |
//! |---------------------------------|-----|---------------|
//! | `intpath watch`                 | 30  | the long-running controller: nothing started beside it may take a switch from it mid-sync |
//! | `intpath deploy` (and the demo) | 20  | a one-shot write; loses to a running watch instead of undoing its work |
//! | `probe-gen send --switch/--hostless` packet-outs | 10 | must be primary to inject, but only while no controller is writing: the controller's short syncs win |
//! | `intpath switches status`       | 1   | arbitrates only to learn who is primary (a backup under any session above) |
//!
//! Reads need no arbitration: `switches status` and watch's per-round look at
//! every switch read without any stream, so no observer can ever collide
//! with, or be mistaken for, a controller. The ids are defaults; every
//! command takes `--election-id` to run two sessions of one kind side by side.
//! The P4Runtime answer to a packet-out sender that should not compete with
//! the controller at all is a role with packet-out rights only; the
//! reference switch knows only the default role, hence the ranking.

/// `intpath watch`: the controller.
pub const WATCH: u64 = 30;
/// `intpath deploy`, and the demo's deploy.
pub const DEPLOY: u64 = 20;
/// `probe-gen` packet-outs into a switch without a host.
pub const PACKET_OUT: u64 = 10;
/// `intpath switches status`'s arbitration view.
pub const OBSERVER: u64 = 1;
