"""Places and measured routes of the MiniMap site, re-grounding the 89 WebArena map tasks offline.

The places are real locations (approximate coordinates) around the ones the WebArena
map tasks ask about; addresses, phone numbers, operators, opening hours and the
route times/distances the tasks' references quote are stored here, so every task in
``shared/data/pae/webarena_map_google_fixed_eval.jsonl`` is answerable on the local
site. Routes without a stored measurement are computed from coordinates
(:mod:`agents.pae.sites.map_routes`). Unanswerable tasks stay unanswerable (no
In-N-Out, no USCIS office, no hotel within 5 minutes' walk of CMU).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Place:
    id: str
    name: str
    categories: tuple[str, ...]
    address: str
    lat: float
    lon: float
    aliases: tuple[str, ...] = ()
    info: dict[str, str] = field(default_factory=dict)  # phone, website, operator, hours, about, borders

    @property
    def full_address(self) -> str:
        return self.address if self.address.startswith(self.name) else f"{self.name}, {self.address}"


_PGH = "Pittsburgh, Allegheny County, Pennsylvania"


def _p(pid: str, name: str, cats: str, address: str, lat: float, lon: float, aliases: str = "", **info: str) -> Place:
    return Place(pid, name, tuple(c.strip() for c in cats.split(",") if c.strip()), address, lat, lon,
                 tuple(a.strip() for a in aliases.split("|") if a.strip()), dict(info))


PLACES: tuple[Place, ...] = (
    # --- Carnegie Mellon campus and Oakland ---------------------------------------------------
    _p("cmu", "Carnegie Mellon University", "university", f"5000, Forbes Avenue, Squirrel Hill North, {_PGH}, "
       "15213, United States", 40.4433, -79.9436, "CMU|Carnegie Mellon|CMU Pittsburgh",
       about="Private research university."),
    _p("gates", "Gates Hillman Center", "university building", f"4902, Forbes Avenue, Squirrel Hill North, {_PGH}, "
       "15213, United States", 40.4435, -79.9445, "gates building|CMU gates building|gates building at CMU"),
    _p("uc", "Cohon University Center", "university building", f"5032, Forbes Avenue, Squirrel Hill North, {_PGH}, "
       "15213, United States", 40.4441, -79.9420, "university center|CMU University Center"),
    _p("hunt", "Hunt Library", "library", f"4909, Frew Street, Squirrel Hill North, {_PGH}, 15213, United States",
       40.4411, -79.9437, "CMU Hunt library|hunt library at CMU|library at CMU"),
    _p("posner", "Posner Hall", "university building", f"Tech Street, Squirrel Hill North, {_PGH}, 15213, "
       "United States", 40.4412, -79.9422, "CMU Posner Hall"),
    _p("sorrells", "Sorrells Library", "library", f"Wean Hall, Squirrel Hill North, {_PGH}, 15213, United States",
       40.4427, -79.9457, "CMU Sorrells Library|Sorrells Engineering and Science Library"),
    _p("cmcafe", "Carnegie Mellon Café", "cafe", f"Forbes Avenue, Squirrel Hill North, {_PGH}, 15213, United States",
       40.4424191, -79.9397388, "Carnegie Mellon Cafe"),
    _p("gallo", "El Gallo de Oro", "restaurant", "Cohon University Center, 5032, Forbes Avenue, Pittsburgh, 15213",
       40.44412, -79.94201),
    _p("backbar", "Back Bar Grill", "restaurant", "Cohon University Center, 5032, Forbes Avenue, Pittsburgh, 15213",
       40.44408, -79.94197),
    _p("grano", "Grano", "restaurant", "Cohon University Center, 5032, Forbes Avenue, Pittsburgh, 15213",
       40.44413, -79.94195),
    _p("beefsteak", "Beefsteak", "restaurant", "Cohon University Center, 5032, Forbes Avenue, Pittsburgh, 15213",
       40.44406, -79.94204),
    _p("nourish", "Nourish", "restaurant", "Cohon University Center, 5032, Forbes Avenue, Pittsburgh, 15213",
       40.44415, -79.94206),
    _p("schatz", "Schatz Dining Room", "restaurant", "Cohon University Center, 5032, Forbes Avenue, Pittsburgh, 15213",
       40.44404, -79.94194),
    _p("aubonpain", "Au Bon Pain", "restaurant, cafe", "Cohon University Center, 5032, Forbes Avenue, Pittsburgh, "
       "15213", 40.44411, -79.94210),
    _p("exchange", "The Exchange", "restaurant", "Posner Hall, Tech Street, Pittsburgh, 15213", 40.4413, -79.9425),
    _p("laprima", "La Prima Espresso", "restaurant, cafe", "Wean Hall, Pittsburgh, 15213", 40.4426, -79.9458),
    _p("defer", "De Fer Coffee & Tea", "cafe", "Hunt Library, 4909, Frew Street, Pittsburgh, 15213",
       40.4412, -79.9436),
    _p("usps", "United States Postal Service", "post office", f"Cohon University Center, Forbes Avenue, {_PGH}, "
       "15213, United States", 40.4439, -79.9428, "USPS|USPS postal office|post office"),
    _p("coldstone", "Cold Stone Creamery", "ice cream", f"3510, Forbes Avenue, Central Oakland, {_PGH}, 15213, "
       "United States", 40.4416, -79.9573, "cold stone ice cream|cold stone"),
    _p("mcdonalds", "McDonald's", "fast food, restaurant", f"3708, Forbes Avenue, Central Oakland, {_PGH}, 15213, "
       "United States", 40.4420, -79.9545, "Mcdonalds|Mcdonald's"),
    _p("wendys", "Wendy's", "fast food, restaurant", f"3800, Forbes Avenue, Central Oakland, {_PGH}, 15213, "
       "United States", 40.4426, -79.9530, "wendys"),
    _p("starbucks_craig", "Starbucks", "cafe", "417, South Craig Street, Bellefield, Pittsburgh, Allegheny County, "
       "Pennsylvania, 15213, United States", 40.4453, -79.9489, "starbucks on Craig Street|starbuck near CMU|"
       "starbucks on forbes ave"),
    _p("starbucks_atwood", "Starbucks", "cafe", f"3618, Forbes Avenue, Central Oakland, {_PGH}, 15213, United States",
       40.4412, -79.9566),
    _p("pitt", "University of Pittsburgh", "university", f"4200, Fifth Avenue, North Oakland, {_PGH}, 15260, "
       "United States", 40.4443, -79.9608, "Univ of Pittsburgh|Upitt|Upitts|Pitt|UPitt"),
    _p("gardner", "Gardner Steel Conference Center", "conference centre", f"130, Thackeray Avenue, North Oakland, "
       f"{_PGH}, 15260, United States", 40.4445, -79.9585, "Gardner Steel Conference Center"),
    _p("wyndham", "Wyndham Pittsburgh University Center", "hotel", f"100, Lytton Avenue, North Oakland, {_PGH}, "
       "15213, United States", 40.4462, -79.9553, "Wyndham Pittsburgh University Cente"),
    _p("oaklander", "The Oaklander Hotel", "hotel", f"5130, Bigelow Boulevard, North Oakland, {_PGH}, 15213, "
       "United States", 40.4460, -79.9560),
    _p("hgi", "Hilton Garden Inn Pittsburgh University Place", "hotel", f"3454, Forbes Avenue, Central Oakland, "
       f"{_PGH}, 15213, United States", 40.4410, -79.9610),
    _p("fuku", "Fuku Tea", "cafe, tea cafe", "3716, Forbes Avenue, Oakland, Central Oakland, Pittsburgh, Allegheny "
       "County, Pennsylvania, 15213, United States", 40.4418, -79.9568, "tea cafe"),
    _p("te_cafe", "Té Cafe", "cafe, tea cafe", f"2000, Murray Avenue, Squirrel Hill South, {_PGH}, 15217, "
       "United States", 40.4345, -79.9230),
    _p("fiveguys", "Five Guys", "fast food, restaurant", "117, South Bouquet Street, Oakland, North Oakland, "
       "Pittsburgh, Allegheny County, Pennsylvania, 15213, United States", 40.4422, -79.9568),
    _p("penn5700", "5700 Penn Avenue", "address", f"5700, Penn Avenue, East Liberty, {_PGH}, 15206, United States",
       40.4628, -79.9255, "5700 Penn Ave"),
    _p("cmoa", "Carnegie Museum of Art", "museum", f"4400, Forbes Avenue, North Oakland, {_PGH}, 15213, "
       "United States", 40.4437, -79.9490, "Carnegie art museum|Carnegie Art Museum|CMoA",
       website="http://web.cmoa.org/"),
    _p("musichall", "Carnegie Music Hall", "concert hall", f"4400, Forbes Avenue, North Oakland, {_PGH}, 15213, "
       "United States", 40.4434, -79.9497),
    _p("busstop_cmoa", "Forbes Avenue at Carnegie Museum (bus stop)", "bus stop", "Forbes Avenue, North Oakland, "
       "Pittsburgh, 15213", 40.4443, -79.94889, "bus stop near CMU",
       about="Bus stop on the Carnegie Museum of Art side of Forbes Avenue, near CMU."),
    _p("busstop_opp", "Forbes Avenue opposite Carnegie Museum (bus stop)", "bus stop", "Forbes Avenue, Bellefield, "
       "Pittsburgh, 15213", 40.4447, -79.94860, "bus stop near CMU",
       about="Bus stop on the Bellefield side of Forbes Avenue (across from the museum)."),
    _p("fifth5000", "5000 Fifth Avenue", "address", f"5000, Fifth Avenue, North Oakland, {_PGH}, 15213, "
       "United States", 40.4508, -79.9478, "5000 Fifth Avenue, Pittsburgh"),
    _p("fifth5600", "5600 Fifth Avenue", "address", f"5600, Fifth Avenue, Shadyside, {_PGH}, 15232, United States",
       40.4530, -79.9300, "5600 fifth avenue"),
    _p("upmc_fhc", "UPMC Family Health Center", "clinic", f"5001, Baum Boulevard, Bloomfield, {_PGH}, 15224, "
       "United States", 40.4562, -79.9471, "UPMC family health center"),
    _p("upmc_shady", "UPMC Shadyside", "hospital", f"5230, Centre Avenue, Shadyside, {_PGH}, 15232, United States",
       40.4546, -79.9395),
    _p("cvs", "CVS", "drugstore", f"5600, Walnut Street, Shadyside, {_PGH}, 15232, United States", 40.4512, -79.9355, "CVS (closet one)|CVS Pharmacy"),
    _p("schillers", "Schiller's Pharmacy", "pharmacy", "811, South Aiken Avenue, Shadyside, Pittsburgh, Allegheny "
       "County, 15232, United States", 40.4505, -79.9367),
    _p("sunoco", "Sunoco", "gas station, fuel", "North Craig Street, North Oakland, Pittsburgh, Allegheny County, "
       "15213, United States", 40.4513, -79.9519),
    _p("bp_penn", "BP", "gas station, fuel", f"6000, Penn Avenue, East Liberty, {_PGH}, 15206, United States",
       40.4610, -79.9240),
    _p("apple", "Apple Store", "electronics", f"5508, Walnut Street, Shadyside, {_PGH}, 15232, United States",
       40.4511693, -79.9334241, "apple store shadyside|Apple Store near Pitt|Apple Walnut Street"),
    _p("westpenn", "Western Pennsylvania Hospital", "hospital", f"4800, Friendship Avenue, Bloomfield, {_PGH}, "
       "15224, United States", 40.4598, -79.9455, "West Penn Hospital", phone="4125785000"),
    _p("heliport", "Western Pennsylvania Hospital Heliport", "heliport", f"Friendship Avenue, Bloomfield, {_PGH}, "
       "15224, United States", 40.46076, -79.94666),
    _p("tokyo", "Tokyo Japanese Food Store", "supermarket, asian food", f"5855, Ellsworth Avenue, Shadyside, {_PGH}, "
       "15232, United States", 40.45761, -79.92934, hours="We-Su 10:00-17:00"),
    _p("schenley", "Schenley Park", "park", f"Schenley Drive, Squirrel Hill South, {_PGH}, 15213, United States",
       40.4362, -79.9448, "Schenley park"),
    _p("rei", "REI", "outdoor shop", f"412, South 27th Street, South Side Flats, {_PGH}, 15203, United States",
       40.4280, -79.9652),
    _p("arl", "Animal Rescue League of Pittsburgh", "animal shelter", f"6620, Hamilton Avenue, Larimer, {_PGH}, "
       "15206, United States", 40.4604, -79.9146),
    _p("chatham", "Chatham University", "university", f"Woodland Road, Squirrel Hill North, {_PGH}, 15232, "
       "United States", 40.4477, -79.9246, "Chatham"),
    _p("ssa", "Social Security Administration", "government office", f"1000, Liberty Avenue, Downtown, {_PGH}, "
       "15222, United States", 40.4433, -79.9976, "social security administration"),
    _p("police4", "Pittsburgh Bureau of Police Zone 4", "police station", f"5858, Northumberland Street, Squirrel "
       f"Hill North, {_PGH}, 15217, United States", 40.4376, -79.9229, "police station"),
    _p("duquesne", "Duquesne University", "university", f"600, Forbes Avenue, Bluff, {_PGH}, 15282, United States",
       40.4362, -79.9933, "duquesne university"),
    _p("walmart", "Walmart Supercenter", "supermarket, department store", "877, The Waterfront Drive, Homestead, Allegheny County, Pennsylvania, 15120, United States",
       40.4086, -79.9122, "walmart"),
    _p("hobart", "Hobart Street", "street", f"Hobart Street, Squirrel Hill North, {_PGH}, 15217, United States",
       40.4330, -79.9290, "hobart street"),
    _p("amc", "AMC Waterfront 22", "cinema", "300, West Waterfront Drive, Homestead, Allegheny County, Pennsylvania, "
       "15120, United States", 40.4063, -79.9166, "AMC Waterfront|amc theatre|AMC theater"),
    _p("science", "Carnegie Science Center", "museum", f"1, Allegheny Avenue, Chateau, {_PGH}, 15212, United States",
       40.4454, -80.0183, "Pittsburgh science museum|science center"),
    _p("randyland", "Randyland", "attraction", f"1501, Arch Street, Central Northside, {_PGH}, 15212, United States",
       40.4567, -80.0126),
    _p("ppg", "PPG Paints Arena", "arena", f"1001, Fifth Avenue, Bluff, {_PGH}, 15219, United States",
       40.4395, -79.9890, "PPG arena"),
    # --- airport area ---------------------------------------------------------------------------
    _p("pit", "Pittsburgh International Airport", "airport, international airport", "Pittsburgh International "
       "Airport, Southern Beltway, Findlay Township, Allegheny County, 15231, United States", 40.4915, -80.2329,
       "PIT|PIT airport|Pittsburgh Airport|Pittsburgh International", operator="Allegheny County Airport Authority"),
    _p("doubletree_pit", "DoubleTree by Hilton Hotel Pittsburgh Airport", "hotel, hilton hotel", "8402, University "
       "Boulevard, Moon Township, Allegheny County, Pennsylvania, 15108, United States", 40.5120, -80.2220,
       "Hilton hotel near the airport", about="A Hilton hotel near Pittsburgh International Airport."),
    _p("hyatt_pit", "Hyatt Regency Pittsburgh International Airport", "hotel, hyatt hotel", "1111, Airport "
       "Boulevard, Findlay Township, Allegheny County, Pennsylvania, 15231, United States", 40.4950, -80.2410,
       "Hyatt hotel near the airport"),
    _p("laquinta", "La Quinta Inn & Suites Pittsburgh Airport", "hotel", "8507, University Boulevard, Moon Township, "
       "Allegheny County, Pennsylvania, 15108, United States", 40.5135, -80.2190, "La Quinta Inn near the airport"),
    _p("aldi", "ALDI", "supermarket", "5990, University Boulevard, Moon Township, Allegheny County, Pennsylvania, "
       "15108, United States", 40.5195, -80.2130, about="Discount supermarket chain headquartered in Germany."),
    _p("gianteagle", "Giant Eagle", "supermarket", "6300, Steubenville Pike, "
       "Robinson Township, Allegheny County, Pennsylvania, 15136, United States", 40.4665, -80.1400,
       about="Supermarket chain founded and headquartered in Pittsburgh (a local company)."),
    _p("redroof", "Red Roof Inn Pittsburgh South Airport", "hotel", "6404, Steubenville Pike, Robinson Township, "
       "Allegheny County, Pennsylvania, 15205, United States", 40.4600, -80.1250, "red roof inn"),
    _p("homewood", "Homewood Suites by Hilton Southpointe", "hotel", "3000, Horizon Vue Drive, Canonsburg, "
       "Washington County, Pennsylvania, 15317, United States", 40.2780, -80.1680, "Homewood Suites Southpointe"),
    # --- wider region ---------------------------------------------------------------------------
    _p("pittsburgh", "Pittsburgh", "city", "Allegheny County, Pennsylvania, United States", 40.4406, -79.9959,
       "Pittsburgh city", about="Home city of the Pittsburgh Pirates (MLB) and the Steelers (NFL)."),
    _p("philadelphia", "Philadelphia", "city", "Philadelphia County, Pennsylvania, United States", 39.9526, -75.1652,
       "Philly", about="Home of the Liberty Bell; the city with the most authentic Philly cheesesteaks."),
    _p("libertybell", "Liberty Bell", "landmark", "526, Market Street, Philadelphia, Pennsylvania, 19106, "
       "United States", 39.9496, -75.1503, about="Located in Philadelphia."),
    _p("nyc", "New York City", "city", "New York, United States", 40.7128, -74.0060, "New York|the big apple|big apple",
       about="Nicknamed 'the Big Apple'."),
    _p("scranton", "Scranton", "city", "Lackawanna County, Pennsylvania, United States", 41.4090, -75.6624,
       about="Hometown of Joe Biden."),
    _p("bridgeport", "Bridgeport", "city", "Fairfield County, Connecticut, United States", 41.1865, -73.1952),
    _p("newhaven", "New Haven", "city", "New Haven County, Connecticut, United States", 41.3083, -72.9279,
       about="The city of Yale University."),
    _p("niagara", "Niagara Falls", "city, waterfall", "Niagara County, New York, United States", 43.0962, -79.0377,
       "city of Niagara Falls"),
    _p("nfia", "Niagara Falls International Airport", "airport, international airport", "Niagara Falls "
       "International Airport, 2035, Niagara Falls Boulevard, City of Niagara Falls, Town of Wheatfield, Niagara "
       "County, New York, 14304, United States", 43.1073, -78.9462),
    _p("buf", "Buffalo-Niagara International Airport", "airport, international airport", "Buffalo-Niagara "
       "International Airport, Holtz Drive, Town of Cheektowaga, Erie County, New York, 14225, United States",
       42.9405, -78.7322, "Buffalo Niagara International Airport|BUF"),
    _p("yyz", "Toronto Pearson International Airport", "airport, international airport", "6301, Silver Dart Drive, "
       "Mississauga, Ontario, L5P 1B2, Canada", 43.6777, -79.6248, "Toronto airport"),
    _p("yale", "Yale University", "university", "Yale University, 105, Wall Street, New Haven, New Haven County, "
       "Connecticut, 06516, United States", 41.3163, -72.9223, "Yale"),
    _p("columbia", "Columbia University", "university", "Columbia University, 116th Street, Manhattan, New York "
       "County, New York, 10027, United States", 40.8075, -73.9626, "Columbia"),
    _p("princeton", "Princeton University", "university", "Princeton University, Nassau Street, Princeton, Mercer "
       "County, New Jersey, 08544, United States", 40.3431, -74.6551, "Princeton"),
    _p("mit", "Massachusetts Institute of Technology", "university", "77, Massachusetts Avenue, Cambridge, "
       "Middlesex County, Massachusetts, 02139, United States", 42.3601, -71.0942, "MIT"),
    _p("harvard", "Harvard University", "university", "Massachusetts Hall, Cambridge, Middlesex County, "
       "Massachusetts, 02138, United States", 42.3770, -71.1167, "Harvard"),
    _p("logan", "Boston Logan International Airport", "airport, international airport", "1, Harborside Drive, "
       "East Boston, Boston, Suffolk County, Massachusetts, 02128, United States", 42.3656, -71.0096,
       "Logan airport|BOS"),
    _p("dt_nyc", "DoubleTree by Hilton New York Downtown", "hotel", "8, Stone Street, Financial District, Manhattan, "
       "New York, 10004, United States", 40.7046, -74.0116),
    _p("keens", "Keens Steakhouse", "restaurant", "72, West 36th Street, Midtown, Manhattan, New York, 10018, "
       "United States", 40.7509, -73.9885),
    _p("st_ct", "Connecticut", "state", "United States", 41.6, -72.7, "CT",
       borders="Rhode Island, Massachusetts, New York"),
    _p("st_pa", "Pennsylvania", "state", "United States", 40.9, -77.8, "PA",
       borders="Ohio, Maryland, New York, New Jersey, Delaware, West Virginia"),
    _p("st_ma", "Massachusetts", "state", "United States", 42.3, -71.8, "MA",
       borders="Rhode Island, Connecticut, New York, New Hampshire, Vermont"),
    _p("st_vt", "Vermont", "state", "United States", 44.0, -72.7, "VT", borders="New York, New Hampshire, Massachusetts"),
    _p("st_nh", "New Hampshire", "state", "United States", 43.7, -71.6, "NH", borders="Massachusetts, Vermont, Maine"),
)

# Stored route measurements: (place a, place b) -> {mode: (meters or None, minutes or None)}; symmetric.
ROUTES: dict[tuple[str, str], dict[str, tuple[float | None, float | None]]] = {
    ("cmu", "pit"): {"driving": (32100, 30)},
    ("cmoa", "pit"): {"driving": (28400, 27)},
    ("niagara", "nfia"): {"driving": (9800, 12)},
    ("niagara", "buf"): {"driving": (34900, 29)},
    ("niagara", "yyz"): {"driving": (128000, 88)},
    ("fifth5000", "upmc_fhc"): {"driving": (1100, 2), "walking": (1300, 16)},
    ("amc", "cmu"): {"driving": (8100, 13), "walking": (7900, 95)},
    ("amc", "pitt"): {"driving": (8900, 15), "walking": (8900, 107)},
    ("science", "cmu"): {"driving": (8200, 12), "walking": (8700, 104)},
    ("randyland", "cmu"): {"driving": (8600, 13), "walking": (8750, 105)},
    ("doubletree_pit", "gianteagle"): {"walking": (2000, 25)},
    ("doubletree_pit", "aldi"): {"walking": (1400, 18)},
    ("hyatt_pit", "aldi"): {"walking": (17000, 210), "driving": (15500, 15)},
    ("hyatt_pit", "gianteagle"): {"walking": (17800, 221), "driving": (15900, 15)},
    ("hyatt_pit", "pit"): {"walking": (450, 6)},
    ("cmu", "starbucks_craig"): {"walking": (557, 7)},
    ("pitt", "starbucks_craig"): {"walking": (1400, 18)},
    ("cmu", "pitt"): {"walking": (2000, 25), "driving": (1900, 4)},
    ("starbucks_craig", "chatham"): {"walking": (2400, 30)},
    ("cmoa", "hunt"): {"walking": (850, 11)},
    ("starbucks_craig", "pit"): {"driving": (31500, 31)},
    ("mit", "harvard"): {"walking": (3600, 45)},
    ("harvard", "logan"): {"driving": (12800, 18)},
    ("cmu", "apple"): {"walking": (1350, 17)},
    ("apple", "starbucks_craig"): {"driving": (2100, 5)},
    ("dt_nyc", "keens"): {"driving": (6400, 14)},
    ("laquinta", "cmu"): {"driving": (33400, 30)},
    ("laquinta", "pitt"): {"driving": (32500, 29)},
    ("redroof", "science"): {"driving": (17900, 20)},
    ("homewood", "ppg"): {"driving": (32800, 34)},
    ("pittsburgh", "philadelphia"): {"driving": (491000, 347)},
    ("nyc", "philadelphia"): {"driving": (153000, 118)},
    ("scranton", "bridgeport"): {"driving": (250000, 200)},
    ("niagara", "newhaven"): {"driving": (683000, 513)},
    ("schenley", "pitt"): {"driving": (1700, 4)},
    ("rei", "cmu"): {"driving": (4300, 7)},
    ("gates", "schenley"): {"driving": (1600, 4)},
    ("arl", "schenley"): {"driving": (5600, 9)},
    ("pitt", "fuku"): {"walking": (653, 8)},
    ("penn5700", "fiveguys"): {"walking": (4000, 50)},
    ("gardner", "wyndham"): {"walking": (375, 5)},
    ("gardner", "oaklander"): {"walking": (338, 4)},
    ("gardner", "hgi"): {"walking": (600, 8)},
    ("cmu", "usps"): {"walking": (90, 1), "driving": (90, 0.3), "cycling": (90, 0.4)},
    ("cmu", "coldstone"): {"driving": (1800, 3)},
    ("cmu", "mcdonalds"): {"driving": (1500, 4)},
    ("cmu", "wendys"): {"driving": (1300, 3)},
    ("cmu", "musichall"): {"walking": (748, 9)},
    ("cmu", "upmc_shady"): {"walking": (1700, 21)},
    ("musichall", "upmc_shady"): {"walking": (2200, 27)},
    ("cvs", "upmc_shady"): {"walking": (1200, 15)},
    ("cmu", "cvs"): {"walking": (1400, 17)},
    ("cmu", "schillers"): {"walking": (1500, 19)},
}
