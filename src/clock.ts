// Time is a dependency: services read it from here so tests can move it by hand.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = {
  now: () => new Date(),
};
